/**
 * Regenerates the self-made Tron fixtures in this folder from tronweb 6.5.1 alone (never from
 * countersign's code), so the tests compare our implementation with an independent one:
 *   npx tsx test/vectors/tron/generate.ts
 * Transactions are built fully offline (a `blockHeader` is passed; the full host points at a port
 * nothing listens on), signed with tronweb's `utils.crypto.signTransaction`, and wrapped into the
 * signed `protocol.Transaction` with tronweb's own generated protobuf classes (`globalThis.TronWebProto`).
 * The facts are derived from tronweb's transaction JSON. invalid.json is hand-made by editing the
 * hex of the first transaction; each case says what was changed.
 */
import { writeFileSync } from 'node:fs';
import { TronWeb, utils } from 'tronweb';

const dir = new URL('.', import.meta.url);
/** Public anvil/hardhat dev key (account 0); never use it outside tests. */
const PK = 'ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const tw = new TronWeb({ fullHost: 'http://127.0.0.1:9' });
const OWNER = TronWeb.address.fromPrivateKey(PK) as string;
/** anvil account 1 (0x70997970…79C8) as a Tron address. */
const RECIPIENT = TronWeb.address.fromHex('4170997970c51812dc3a010c7d01b50e0d17dc79c8');
/** Mainnet USDT (TRC-20). */
const USDT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';

const HEADER = {
  ref_block_bytes: '1a2b',
  ref_block_hash: '0011223344556677',
  expiration: 1_700_000_060_000,
  timestamp: 1_700_000_000_000,
};
const HEADER2 = {
  ref_block_bytes: 'ffee',
  ref_block_hash: 'a1b2c3d4e5f60718',
  expiration: 1_767_225_660_123,
  timestamp: 1_767_225_600_123,
};

interface FieldsJson {
  kind: 'TRX_TRANSFER' | 'TRC20_TRANSFER';
  ownerAddress: string;
  toAddress: string;
  amount: string;
  tokenContract: string;
  feeLimit: string;
  refBlockBytes: string;
  refBlockHash: string;
  expiration: string;
  timestamp: string;
  /** hex */
  memo: string;
  permissionId: number;
  expectedTxId: string;
}

type TronWebTx = any;

function headerFields(h: typeof HEADER) {
  return {
    refBlockBytes: h.ref_block_bytes,
    refBlockHash: h.ref_block_hash,
    expiration: String(h.expiration),
    timestamp: String(h.timestamp),
  };
}

const hexAddr = (a: string) => TronWeb.address.fromHex(a);

/** The `tron.tx` facts, read off tronweb's JSON (addresses hex → base58, numbers as decimal strings). */
function facts(tx: TronWebTx) {
  const raw = tx.raw_data;
  return {
    ref_block_bytes: raw.ref_block_bytes,
    ref_block_hash: raw.ref_block_hash,
    expiration: String(raw.expiration),
    timestamp: String(raw.timestamp ?? 0),
    data: raw.data ?? '',
    fee_limit: String(raw.fee_limit ?? 0),
    contract: raw.contract.map((c: TronWebTx) => {
      const v = c.parameter.value;
      const common = { type: c.type, permission_id: String(c.Permission_id ?? 0), owner_address: hexAddr(v.owner_address) };
      if (c.type === 'TransferContract') return { ...common, to_address: hexAddr(v.to_address), amount: String(v.amount) };
      if (c.type === 'TriggerSmartContract') {
        return {
          ...common,
          contract_address: hexAddr(v.contract_address),
          call_value: String(v.call_value ?? 0),
          data: v.data,
          call_token_value: String(v.call_token_value ?? 0),
          token_id: String(v.token_id ?? 0),
        };
      }
      const resource = v.resource ?? 'BANDWIDTH';
      if (c.type === 'FreezeBalanceV2Contract')
        return { ...common, frozen_balance: String(v.frozen_balance ?? 0), resource };
      if (c.type === 'UnfreezeBalanceV2Contract')
        return { ...common, unfreeze_balance: String(v.unfreeze_balance ?? 0), resource };
      if (c.type === 'DelegateResourceContract' || c.type === 'UnDelegateResourceContract') {
        const base = { ...common, resource, balance: String(v.balance ?? 0), receiver_address: hexAddr(v.receiver_address) };
        if (c.type === 'UnDelegateResourceContract') return base;
        return { ...base, lock: v.lock ?? false, lock_period: String(v.lock_period ?? 0) };
      }
      if (c.type === 'AccountPermissionUpdateContract') {
        const permission = (p: TronWebTx) => ({
          type: p.type ?? 'Owner',
          id: String(p.id ?? 0),
          permission_name: p.permission_name ?? '',
          threshold: String(p.threshold ?? 0),
          parent_id: String(p.parent_id ?? 0),
          operations: p.operations ?? '',
          keys: (p.keys ?? []).map((k: TronWebTx) => ({ address: hexAddr(k.address), weight: String(k.weight ?? 0) })),
        });
        return {
          ...common,
          ...(v.owner === undefined ? {} : { owner: permission(v.owner) }),
          ...(v.witness === undefined ? {} : { witness: permission(v.witness) }),
          actives: (v.actives ?? []).map(permission),
        };
      }
      return common;
    }),
  };
}

function signedHex(rawDataHex: string, signatureHex: string): string {
  const P = (globalThis as any).TronWebProto;
  const t = new P.Transaction();
  t.setRawData(P.Transaction.raw.deserializeBinary(Buffer.from(rawDataHex, 'hex')));
  t.addSignature(Buffer.from(signatureHex, 'hex'));
  return Buffer.from(t.serializeBinary()).toString('hex');
}

async function vector(name: string, tx: TronWebTx, fields: FieldsJson | null) {
  if (!utils.transaction.txCheck(tx)) throw new Error(`${name}: tronweb txCheck failed`);
  const signed = utils.crypto.signTransaction(PK, structuredClone(tx));
  const signature = (signed.signature as string[])[0] as string;
  return {
    name,
    fields,
    rawDataHex: tx.raw_data_hex as string,
    txID: tx.txID as string,
    signature,
    signedHex: signedHex(tx.raw_data_hex, signature),
    signer: TronWeb.address.fromHex(utils.crypto.ecRecover(tx.txID, signature)),
    facts: facts(tx),
  };
}

const blank = { tokenContract: '', feeLimit: '', memo: '', permissionId: 0, expectedTxId: '' };

const trx = await tw.transactionBuilder.sendTrx(RECIPIENT, 1_000_000, OWNER, { blockHeader: HEADER });
const trxBig = await tw.transactionBuilder.sendTrx(RECIPIENT, 9_007_199_254_740_991, OWNER, {
  blockHeader: HEADER2,
  permissionId: 2,
});
const trxMemo = await tw.transactionBuilder.addUpdateData(
  await tw.transactionBuilder.sendTrx(RECIPIENT, 1, OWNER, { blockHeader: HEADER2 }),
  'countersign memo ✓',
  'utf8',
  { txLocal: true },
);
const trc20 = (
  await tw.transactionBuilder.triggerSmartContract(
    USDT,
    'transfer(address,uint256)',
    { feeLimit: 100_000_000, blockHeader: HEADER, txLocal: true },
    [
      { type: 'address', value: RECIPIENT },
      { type: 'uint256', value: '1000000' },
    ],
    OWNER,
  )
).transaction;
const trc20Big = (
  await tw.transactionBuilder.triggerSmartContract(
    USDT,
    'transfer(address,uint256)',
    { feeLimit: 15_000_000_000, blockHeader: HEADER2, txLocal: true, permissionId: 3 },
    [
      { type: 'address', value: RECIPIENT },
      { type: 'uint256', value: ((1n << 256n) - 1n).toString() },
    ],
    OWNER,
  )
).transaction;
const trc20Memo = await tw.transactionBuilder.addUpdateData(
  (
    await tw.transactionBuilder.triggerSmartContract(
      USDT,
      'transfer(address,uint256)',
      { feeLimit: 30_000_000, blockHeader: HEADER2, txLocal: true },
      [
        { type: 'address', value: RECIPIENT },
        { type: 'uint256', value: '0' },
      ],
      OWNER,
    )
  ).transaction,
  'c0ffee',
  'hex',
  { txLocal: true },
);
const freeze = await tw.transactionBuilder.freezeBalanceV2(5_000_000, 'ENERGY', OWNER, { blockHeader: HEADER });
const unfreeze = await tw.transactionBuilder.unfreezeBalanceV2(2_000_000, 'BANDWIDTH', OWNER, { blockHeader: HEADER2 });
const delegate = await tw.transactionBuilder.delegateResource(3_000_000, RECIPIENT, 'ENERGY', OWNER, true, 28_800, {
  blockHeader: HEADER,
});
const undelegate = await tw.transactionBuilder.undelegateResource(1_000_000, RECIPIENT, 'ENERGY', OWNER, {
  blockHeader: HEADER2,
  permissionId: 2,
});
const permissions = await tw.transactionBuilder.updateAccountPermissions(
  OWNER,
  { type: 0, permission_name: 'owner', threshold: 2, keys: [{ address: OWNER, weight: 1 }, { address: RECIPIENT, weight: 1 }] },
  undefined,
  [
    {
      type: 2,
      id: 2,
      permission_name: 'transfers',
      threshold: 1,
      operations: '7fff1fc0033e0300000000000000000000000000000000000000000000000000',
      keys: [{ address: RECIPIENT, weight: 1 }],
    },
  ],
  { blockHeader: HEADER },
);

const transactions = [
  await vector('TRX transfer', trx, {
    kind: 'TRX_TRANSFER', ownerAddress: OWNER, toAddress: RECIPIENT, amount: '1000000', ...blank, ...headerFields(HEADER),
  }),
  await vector('TRX transfer of 2^53 - 1 sun with permission 2', trxBig, {
    kind: 'TRX_TRANSFER', ownerAddress: OWNER, toAddress: RECIPIENT, amount: '9007199254740991', ...blank, permissionId: 2, ...headerFields(HEADER2),
  }),
  await vector('TRX transfer with a UTF-8 memo', trxMemo, {
    kind: 'TRX_TRANSFER', ownerAddress: OWNER, toAddress: RECIPIENT, amount: '1', ...blank,
    memo: Buffer.from('countersign memo ✓').toString('hex'), ...headerFields(HEADER2),
  }),
  await vector('TRC-20 transfer', trc20, {
    kind: 'TRC20_TRANSFER', ownerAddress: OWNER, toAddress: RECIPIENT, amount: '1000000', ...blank,
    tokenContract: USDT, feeLimit: '100000000', ...headerFields(HEADER),
  }),
  await vector('TRC-20 transfer of 2^256 - 1 with permission 3', trc20Big, {
    kind: 'TRC20_TRANSFER', ownerAddress: OWNER, toAddress: RECIPIENT, amount: ((1n << 256n) - 1n).toString(), ...blank,
    tokenContract: USDT, feeLimit: '15000000000', permissionId: 3, ...headerFields(HEADER2),
  }),
  await vector('TRC-20 transfer of 0 with a hex memo', trc20Memo, {
    kind: 'TRC20_TRANSFER', ownerAddress: OWNER, toAddress: RECIPIENT, amount: '0', ...blank,
    tokenContract: USDT, feeLimit: '30000000', memo: 'c0ffee', ...headerFields(HEADER2),
  }),
  await vector('FreezeBalanceV2Contract', freeze, null),
  await vector('UnfreezeBalanceV2Contract', unfreeze, null),
  await vector('DelegateResourceContract, locked', delegate, null),
  await vector('UnDelegateResourceContract with permission 2', undelegate, null),
  await vector('AccountPermissionUpdateContract', permissions, null),
];

writeFileSync(
  new URL('transactions.json', dir),
  `${JSON.stringify({ privateKey: PK, signer: OWNER, recipient: RECIPIENT, transactions }, null, 2)}\n`,
);

// Hand-made invalid raw_data: edits of the first transaction's hex (string surgery, no encoder).
const base = trx.raw_data_hex as string;
const EXP = '40e0a499ffbc31';
const CONTRACT = base.slice(base.indexOf('5a67'), base.indexOf('7080d095ffbc31'));
const must = (s: string, what: string) => {
  if (s === base) throw new Error(`invalid case "${what}" did not change the hex`);
  return s;
};
const invalid = [
  ['empty input', '', 'raw_data: is empty'],
  ['truncated by one byte', base.slice(0, -2), 'truncated'],
  ['a trailing lone tag byte', `${base}70`, 'truncated'],
  ['a trailing zero byte (field number 0)', `${base}00`, 'out of range'],
  ['an overlong (non-minimal) expiration varint', base.replace(EXP, '40e0a499ffbcb100'), 'overlong'],
  ['an 11-byte varint', base.replace(EXP, `40${'ff'.repeat(10)}01`), 'longer than 10 bytes'],
  ['a varint above 2^64 - 1', base.replace(EXP, `40${'ff'.repeat(9)}7f`), 'exceeds 64 bits'],
  ['a negative expiration (int64 -1)', base.replace(EXP, `40${'ff'.repeat(9)}01`), 'expiration: must not be negative'],
  ['expiration with wire type 2', base.replace(EXP, '4206e0a499ffbc31'), 'expiration: has wire type 2'],
  ['expiration as fixed64 (wire type 1)', base.replace(EXP, '410102030405060708'), 'expiration: has wire type 1'],
  ['expiration twice', base.replace(EXP, EXP + EXP), 'expiration: appears more than once'],
  ['ref_block_num explicitly 0', base.replace('0a021a2b', '0a021a2b1800'), 'ref_block_num: explicitly encodes the default'],
  ['an empty memo explicitly encoded', base.replace(EXP, `${EXP}5200`), 'data: explicitly encodes the default'],
  ['timestamp moved to the front (fields out of order)', `7080d095ffbc31${base.replace('7080d095ffbc31', '')}`, 'must be in number order'],
  ['a group (wire type 3)', `${base}a301`, 'unsupported wire type 3'],
  ['ref_block_bytes of 3 bytes', base.replace('0a021a2b', '0a031a2b00'), 'ref_block_bytes: must be 2 bytes'],
  ['ref_block_hash missing', base.replace('22080011223344556677', ''), 'ref_block_hash: must be 8 bytes'],
  ['expiration missing', base.replace(EXP, ''), 'expiration: is required'],
  ['no contract', base.replace(CONTRACT, ''), 'must hold exactly one contract, got 0'],
  ['two contracts', base.replace(CONTRACT, CONTRACT + CONTRACT), 'must hold exactly one contract, got 2'],
  ['contract type 7 (not defined)', base.replace('5a6708011263', '5a6708071263'), 'contract type 7 is not supported'],
  ['contract type 2 with the TransferContract type_url', base.replace('5a6708011263', '5a6708021263'), 'type_url: must be type.googleapis.com/protocol.TransferAssetContract'],
  ['a length running past the end', base.replace('5a67', '5a7f'), 'declares'],
].map(([name, hex, message]) => ({ name, hex: must(hex as string, name as string), message }));
writeFileSync(new URL('invalid.json', dir), `${JSON.stringify({ source: 'edits of transactions[0].rawDataHex', rawData: invalid }, null, 2)}\n`);
console.log(`wrote ${transactions.length} transactions and ${invalid.length} invalid cases`);
