/**
 * Regenerates the self-made Ethereum fixtures in this folder from viem alone (never from
 * countersign's code), so the tests compare our implementation with an independent one:
 *   npx tsx test/vectors/ethereum/generate.ts
 * The tests additionally cross-check every transaction fixture with @ethereumjs/tx at run time.
 */
import { writeFileSync } from 'node:fs';
import {
  toRlp,
  hashMessage,
  hashTypedData,
  keccak256,
  serializeTransaction,
  type Hex,
  type TransactionSerializable,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { hashAuthorization } from 'viem/utils';

const dir = new URL('.', import.meta.url);
/** Public anvil/hardhat dev key (account 0); never use it outside tests. */
const PK = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' as const;
const account = privateKeyToAccount(PK);

const RECIPIENT: Hex = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const TOKEN: Hex = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
const KEY1 = `0x${'00'.repeat(31)}01` as Hex;
const KEY2 = `0x${'ab'.repeat(32)}` as Hex;
const BLOB1 = `0x01${'11'.repeat(31)}` as Hex;
const BLOB2 = `0x01${'22'.repeat(31)}` as Hex;
const TRANSFER = `0xa9059cbb000000000000000000000000${RECIPIENT.slice(2)}00000000000000000000000000000000000000000000000000000000000f4240` as Hex;

/** The fields as the gRPC message carries them; bytes as 0x hex. */
interface FieldsJson {
  type: string;
  chainId: string;
  nonce: string;
  to: string;
  value: string;
  data: string;
  gasLimit: string;
  gasPrice: string;
  maxFeePerGas: string;
  maxPriorityFeePerGas: string;
  accessList: { address: string; storageKeys: string[] }[];
  maxFeePerBlobGas: string;
  blobVersionedHashes: string[];
  authorizationList: { chainId: string; address: string; nonce: string; yParity: number; r: string; s: string }[];
  legacyWithoutChainId: boolean;
}

const blank: FieldsJson = {
  type: 'UNSPECIFIED',
  chainId: '',
  nonce: '',
  to: '',
  value: '',
  data: '0x',
  gasLimit: '',
  gasPrice: '',
  maxFeePerGas: '',
  maxPriorityFeePerGas: '',
  accessList: [],
  maxFeePerBlobGas: '',
  blobVersionedHashes: [],
  authorizationList: [],
  legacyWithoutChainId: false,
};

const auth1 = await account.signAuthorization({ address: TOKEN, chainId: 1, nonce: 5 });
const auth2 = await account.signAuthorization({ address: RECIPIENT, chainId: 0, nonce: 0 });

const cases: { name: string; fields: FieldsJson; viem: TransactionSerializable }[] = [
  {
    name: 'legacy EIP-155 ether transfer',
    fields: { ...blank, type: 'LEGACY', chainId: '1', nonce: '0', to: RECIPIENT, value: '1000000000000000000', gasLimit: '21000', gasPrice: '20000000000' },
    viem: { type: 'legacy', chainId: 1, nonce: 0, to: RECIPIENT, value: 10n ** 18n, gas: 21000n, gasPrice: 20_000_000_000n },
  },
  {
    name: 'legacy EIP-155 on Sepolia with calldata',
    fields: { ...blank, type: 'LEGACY', chainId: '11155111', nonce: '1234', to: TOKEN, data: TRANSFER, gasLimit: '65000', gasPrice: '1500000000' },
    viem: { type: 'legacy', chainId: 11155111, nonce: 1234, to: TOKEN, data: TRANSFER, gas: 65000n, gasPrice: 1_500_000_000n },
  },
  {
    name: 'legacy pre-EIP-155 contract creation',
    fields: { ...blank, type: 'LEGACY', legacyWithoutChainId: true, nonce: '7', data: '0x6080604052348015600f57600080fd5b50', gasLimit: '100000', gasPrice: '1000000000' },
    viem: { type: 'legacy', nonce: 7, data: '0x6080604052348015600f57600080fd5b50', gas: 100000n, gasPrice: 1_000_000_000n },
  },
  {
    name: 'EIP-2930 with an access list',
    fields: { ...blank, type: 'EIP2930', chainId: '31337', nonce: '3', to: TOKEN, value: '0', data: TRANSFER, gasLimit: '80000', gasPrice: '2000000000', accessList: [{ address: TOKEN, storageKeys: [KEY1, KEY2] }, { address: RECIPIENT, storageKeys: [] }] },
    viem: { type: 'eip2930', chainId: 31337, nonce: 3, to: TOKEN, data: TRANSFER, gas: 80000n, gasPrice: 2_000_000_000n, accessList: [{ address: TOKEN, storageKeys: [KEY1, KEY2] }, { address: RECIPIENT, storageKeys: [] }] },
  },
  {
    name: 'EIP-1559 ether transfer',
    fields: { ...blank, type: 'EIP1559', chainId: '1', nonce: '0', to: RECIPIENT, value: '123456789', gasLimit: '21000', maxFeePerGas: '30000000000', maxPriorityFeePerGas: '1000000000' },
    viem: { type: 'eip1559', chainId: 1, nonce: 0, to: RECIPIENT, value: 123456789n, gas: 21000n, maxFeePerGas: 30_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n },
  },
  {
    name: 'EIP-1559 (type unspecified) contract creation with a large value and access list',
    fields: { ...blank, chainId: '8453', nonce: '18446744073709551614', value: '57896044618658097711785492504343953926634992332820282019728792003956564819968', data: '0x00ff', gasLimit: '3000000', maxFeePerGas: '100', maxPriorityFeePerGas: '0', accessList: [{ address: TOKEN, storageKeys: [KEY2] }] },
    viem: { type: 'eip1559', chainId: 8453, nonce: 18446744073709551614n as unknown as number, value: 2n ** 255n, data: '0x00ff', gas: 3_000_000n, maxFeePerGas: 100n, maxPriorityFeePerGas: 0n, accessList: [{ address: TOKEN, storageKeys: [KEY2] }] },
  },
  {
    name: 'EIP-4844 blob transaction body',
    fields: { ...blank, type: 'EIP4844', chainId: '1', nonce: '9', to: RECIPIENT, gasLimit: '21000', maxFeePerGas: '40000000000', maxPriorityFeePerGas: '2000000000', maxFeePerBlobGas: '1000000000', blobVersionedHashes: [BLOB1, BLOB2] },
    viem: { type: 'eip4844', chainId: 1, nonce: 9, to: RECIPIENT, gas: 21000n, maxFeePerGas: 40_000_000_000n, maxPriorityFeePerGas: 2_000_000_000n, maxFeePerBlobGas: 1_000_000_000n, blobVersionedHashes: [BLOB1, BLOB2] },
  },
  {
    name: 'EIP-7702 set-code transaction with two authorizations',
    fields: {
      ...blank, type: 'EIP7702', chainId: '1', nonce: '4', to: account.address.toLowerCase(), data: '0xdeadbeef', gasLimit: '100000', maxFeePerGas: '20000000000', maxPriorityFeePerGas: '1000000000',
      authorizationList: [auth1, auth2].map((a) => ({ chainId: String(a.chainId), address: a.address.toLowerCase(), nonce: String(a.nonce), yParity: a.yParity ?? 0, r: a.r, s: a.s })),
    },
    viem: { type: 'eip7702', chainId: 1, nonce: 4, to: account.address, data: '0xdeadbeef', gas: 100000n, maxFeePerGas: 20_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n, authorizationList: [auth1, auth2] },
  },
];

const transactions = [];
for (const c of cases) {
  const unsigned = serializeTransaction(c.viem);
  const signed = await account.signTransaction(c.viem);
  transactions.push({ name: c.name, fields: c.fields, unsigned, digest: keccak256(unsigned), signed, hash: keccak256(signed), sender: account.address });
}

writeFileSync(
  new URL('transactions.json', dir),
  `${JSON.stringify(
    {
      _comment:
        'Self-made fixtures (not from ethereum/tests): unsigned/digest/signed/hash computed by viem 2.57.20 serializeTransaction + privateKeyToAccount(anvil key 0).signTransaction via generate.ts; the tests also cross-check each one with @ethereumjs/tx 10.1.3 at run time.',
      privateKey: PK,
      sender: account.address,
      transactions,
    },
    null,
    2,
  )}\n`,
);

// EIP-191 personal messages.
const messages = ['hello world', '', 'countersign \u2713 unicode', `0x${'ff'.repeat(40)}`];
writeFileSync(
  new URL('eip191.json', dir),
  `${JSON.stringify(
    {
      _comment: 'Self-made: digest = viem hashMessage({raw: bytes}) for the UTF-8 bytes of `text` (or the bytes of `hex`).',
      valid: [
        ...messages.slice(0, 3).map((text) => ({ text, digest: hashMessage(text) })),
        { hex: messages[3], digest: hashMessage({ raw: messages[3] as Hex }) },
      ],
    },
    null,
    2,
  )}\n`,
);

// EIP-7702 authorization digests.
// viem types nonce/chainId as numbers but encodes bigints the same way; the last case uses the 2^64-1 nonce bound.
const auths = [
  { address: TOKEN, chainId: 1, nonce: 5 },
  { address: RECIPIENT, chainId: 0, nonce: 0 },
  { address: account.address, chainId: 11155111, nonce: 18446744073709551615n as unknown as number },
];
writeFileSync(
  new URL('eip7702.json', dir),
  `${JSON.stringify(
    {
      _comment: 'Self-made: digest = viem hashAuthorization({address, chainId, nonce}) from viem/utils.',
      valid: [
        ...auths.slice(0, 2).map((a) => ({ json: JSON.stringify(a), digest: hashAuthorization(a) })),
        {
          json: JSON.stringify({ address: account.address, chainId: '0xaa36a7', nonce: '18446744073709551615' }),
          digest: hashAuthorization(auths[2]!),
        },
      ],
    },
    null,
    2,
  )}\n`,
);

// EIP-712 typed data: the spec's "Ether Mail" example plus self-made ones covering every atomic type.
const etherMail = {
  types: {
    EIP712Domain: [
      { name: 'name', type: 'string' },
      { name: 'version', type: 'string' },
      { name: 'chainId', type: 'uint256' },
      { name: 'verifyingContract', type: 'address' },
    ],
    Person: [
      { name: 'name', type: 'string' },
      { name: 'wallet', type: 'address' },
    ],
    Mail: [
      { name: 'from', type: 'Person' },
      { name: 'to', type: 'Person' },
      { name: 'contents', type: 'string' },
    ],
  },
  primaryType: 'Mail',
  domain: { name: 'Ether Mail', version: '1', chainId: 1, verifyingContract: '0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC' },
  message: {
    from: { name: 'Cow', wallet: '0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826' },
    to: { name: 'Bob', wallet: '0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB' },
    contents: 'Hello, Bob!',
  },
} as const;

const everyType = {
  types: {
    EIP712Domain: [
      { name: 'name', type: 'string' },
      { name: 'chainId', type: 'uint256' },
      { name: 'salt', type: 'bytes32' },
    ],
    Order: [
      { name: 'maker', type: 'address' },
      { name: 'amounts', type: 'uint128[]' },
      { name: 'delta', type: 'int64' },
      { name: 'flag', type: 'bool' },
      { name: 'tag', type: 'bytes4' },
      { name: 'blob', type: 'bytes' },
      { name: 'grid', type: 'uint8[2][]' },
      { name: 'items', type: 'Item[]' },
      { name: 'parent', type: 'Node' },
    ],
    Item: [
      { name: 'id', type: 'uint256' },
      { name: 'note', type: 'string' },
    ],
    Node: [
      { name: 'label', type: 'string' },
      { name: 'children', type: 'Node[]' },
    ],
  },
  primaryType: 'Order',
  domain: { name: 'Every Type', chainId: '31337', salt: `0x${'5a'.repeat(32)}` },
  message: {
    maker: RECIPIENT,
    amounts: ['0', '340282366920938463463374607431768211455', 7],
    delta: '-9223372036854775808',
    flag: true,
    tag: '0xa9059cbb',
    blob: '0x',
    grid: [
      [1, 2],
      [255, 0],
    ],
    items: [
      { id: '1', note: 'first' },
      { id: '115792089237316195423570985008687907853269984665640564039457584007913129639935', note: '' },
    ],
    parent: { label: 'root', children: [{ label: 'leaf', children: [] }] },
  },
};

const domainOnly = {
  types: { EIP712Domain: [{ name: 'name', type: 'string' }] },
  primaryType: 'EIP712Domain',
  domain: { name: 'only the domain' },
  message: {},
};

const typed = [
  { name: 'EIP-712 Ether Mail (spec example)', data: etherMail, domainSeparator: '0xf2cee375fa42b42143804025fc449deafd50cc031ca257e0b194a650a912090f' },
  { name: 'every atomic type, arrays of arrays, struct arrays, recursion (self-made)', data: everyType },
  { name: 'primaryType EIP712Domain signs the domain alone (self-made)', data: domainOnly },
];
writeFileSync(
  new URL('eip712.json', dir),
  `${JSON.stringify(
    {
      _comment:
        'Ether Mail is the example of EIP-712 (digest and domain separator as published in the EIP); the others are self-made, digest = viem hashTypedData(data).',
      valid: typed.map((t) => ({
        name: t.name,
        json: JSON.stringify(t.data),
        digest: hashTypedData(t.data as Parameters<typeof hashTypedData>[0]),
        ...(t.domainSeparator ? { domainSeparator: t.domainSeparator } : {}),
      })),
    },
    null,
    2,
  )}\n`,
);
// Invalid unsigned inputs, built with viem's (non-validating) toRlp or by hand.
const legacyBody: Hex[] = ['0x05', '0x', '0x5208', RECIPIENT, '0x', '0x'];
const body1559 = (over: Partial<Record<number, Hex | Hex[] | Hex[][]>> = {}): (Hex | Hex[] | Hex[][])[] => {
  const f: (Hex | Hex[] | Hex[][])[] = ['0x01', '0x07', '0x3b9aca00', '0x06fc23ac00', '0x5208', RECIPIENT, '0x', '0x', []];
  for (const [i, v] of Object.entries(over)) f[Number(i)] = v as Hex;
  return f;
};
const typedTx = (type: string, items: unknown[]): Hex => `0x${type}${toRlp(items as Hex[]).slice(2)}` as Hex;
const valid1559 = typedTx('02', body1559());
const body4844 = [...body1559(), '0x01', [BLOB1]];
const longData = `0xb90038${'ab'.repeat(56)}`;
const unsignedInvalid = [
  { name: 'empty input', hex: '0x', code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'transaction: is empty' },
  { name: 'an RLP string instead of a list', hex: '0x83010203', code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'RLP string' },
  { name: 'unknown type byte 0x05', hex: '0x05c0', code: 'ETHEREUM_UNSUPPORTED_TRANSACTION_TYPE' },
  { name: 'type byte 0x00', hex: '0x00c0', code: 'ETHEREUM_UNSUPPORTED_TRANSACTION_TYPE' },
  { name: 'type byte 0x7f', hex: '0x7fc0', code: 'ETHEREUM_UNSUPPORTED_TRANSACTION_TYPE' },
  { name: 'Tempo type byte 0x76', hex: '0x76c0', code: 'ETHEREUM_UNSUPPORTED_TRANSACTION_TYPE', message: 'Tempo' },
  { name: 'trailing byte after a valid EIP-1559 body', hex: `${valid1559}00`, code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'trailing' },
  { name: 'truncated EIP-1559 body', hex: valid1559.slice(0, -2), code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'truncated' },
  { name: 'typed envelope without payload', hex: '0x02', code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'empty' },
  { name: 'EIP-4844 network wrapper with sidecars', hex: typedTx('03', [body4844, [], [], []]), code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'network wrapper' },
  { name: 'signed legacy transaction', hex: transactions[0]!.signed, code: 'ETHEREUM_SIGNED_TRANSACTION' },
  { name: 'signed pre-EIP-155 legacy transaction', hex: transactions[2]!.signed, code: 'ETHEREUM_SIGNED_TRANSACTION' },
  { name: 'signed EIP-1559 transaction', hex: transactions[4]!.signed, code: 'ETHEREUM_SIGNED_TRANSACTION' },
  { name: 'signed EIP-4844 body', hex: transactions[6]!.signed, code: 'ETHEREUM_SIGNED_TRANSACTION' },
  { name: 'signed EIP-7702 transaction', hex: transactions[7]!.signed, code: 'ETHEREUM_SIGNED_TRANSACTION' },
  { name: 'legacy with r set but s zero', hex: toRlp([...legacyBody, '0x01', '0x01', '0x']), code: 'ETHEREUM_SIGNED_TRANSACTION' },
  { name: 'nonce with a leading zero byte', hex: typedTx('02', body1559({ 1: '0x0007' })), code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'nonce: integer has a leading zero byte' },
  { name: 'value zero encoded as 0x00', hex: typedTx('02', body1559({ 6: '0x00' })), code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'value: integer has a leading zero byte' },
  { name: 'single byte below 0x80 wrapped as a string', hex: '0xc781058080808080', code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'wrapped' },
  { name: 'long-form length for a short string', hex: '0xc8058080808080b801ff', code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'short form' },
  { name: 'long-form length for a short list', hex: '0xf806058080808080', code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'short form' },
  { name: 'leading zero in a long-form length', hex: `0xf840058080808080${longData.slice(2)}`, code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'leading zero' },
  { name: 'legacy list with 7 fields', hex: '0xc705808080808080', code: 'ETHEREUM_MALFORMED_TRANSACTION', message: '7 fields' },
  { name: 'EIP-155 form with chain id 0', hex: toRlp([...legacyBody, '0x', '0x', '0x']), code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'chain_id' },
  { name: 'to of 19 bytes', hex: toRlp(['0x05', '0x', '0x5208', `0x${'11'.repeat(19)}`, '0x', '0x']), code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'to:' },
  { name: 'data given as a list', hex: toRlp(['0x05', '0x', '0x5208', RECIPIENT, '0x', []]), code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'data:' },
  { name: 'EIP-1559 payload with 8 fields', hex: typedTx('02', body1559().slice(0, 8)), code: 'ETHEREUM_MALFORMED_TRANSACTION', message: '8 fields' },
  { name: 'EIP-1559 chain id 0', hex: typedTx('02', body1559({ 0: '0x' })), code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'chain_id' },
  { name: 'EIP-1559 priority fee above the fee cap', hex: typedTx('02', body1559({ 2: '0x06fc23ac01' })), code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'max_priority_fee_per_gas' },
  { name: 'nonce 2^64-1 (EIP-2681)', hex: typedTx('02', body1559({ 1: '0xffffffffffffffff' })), code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'nonce' },
  { name: 'nonce wider than 64 bits', hex: typedTx('02', body1559({ 1: '0x010000000000000000' })), code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'nonce' },
  { name: 'value wider than 256 bits', hex: typedTx('02', body1559({ 6: `0x01${'00'.repeat(32)}` })), code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'value' },
  { name: 'access list entry with 3 fields', hex: typedTx('02', body1559({ 8: [[TOKEN, [], '0x01'] as unknown as Hex[]] as unknown as Hex[][] })), code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'access_list[0]' },
  { name: 'storage key of 31 bytes', hex: typedTx('02', body1559({ 8: [[TOKEN, [`0x${'11'.repeat(31)}`]] as unknown as Hex[]] as unknown as Hex[][] })), code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'storage_keys[0]' },
  { name: 'EIP-4844 without to', hex: typedTx('03', [...body1559({ 5: '0x' }), '0x01', [BLOB1]]), code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'to:' },
  { name: 'EIP-4844 without blob hashes', hex: typedTx('03', [...body1559(), '0x01', []]), code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'blob_versioned_hashes' },
  { name: 'EIP-4844 blob hash with version 0x02', hex: typedTx('03', [...body1559(), '0x01', [`0x02${'11'.repeat(31)}`]]), code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'blob_versioned_hashes[0]' },
  { name: 'EIP-7702 with an empty authorization list', hex: typedTx('04', [...body1559(), []]), code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'authorization_list' },
  { name: 'EIP-7702 authorization with 5 fields', hex: typedTx('04', [...body1559(), [['0x01', TOKEN, '0x', '0x', '0x01']]]), code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'authorization_list[0]' },
  { name: 'EIP-7702 authorization y_parity of 2 bytes', hex: typedTx('04', [...body1559(), [['0x01', TOKEN, '0x', '0x0100', '0x01', '0x01']]]), code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'y_parity' },
  { name: 'EIP-7702 contract creation', hex: typedTx('04', [...body1559({ 5: '0x' }), [['0x01', TOKEN, '0x', '0x', '0x01', '0x01']]]), code: 'ETHEREUM_MALFORMED_TRANSACTION', message: 'to:' },
];
writeFileSync(
  new URL('invalid.json', dir),
  `${JSON.stringify(
    {
      _comment:
        'Self-made malformed or rejected unsigned inputs (built with viem toRlp or by hand); `message` is a substring the error message must contain.',
      unsigned: unsignedInvalid,
    },
    null,
    2,
  )}\n`,
);
console.log('written');
