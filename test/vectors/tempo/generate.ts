/**
 * Regenerates the Tempo fixtures in this folder from ox alone (never from countersign's code), so
 * the tests compare our codec with an independent one:
 *   npx tsx test/vectors/tempo/generate.ts
 * `ox.json`: every serialized 0x76/0x78 literal in the inline snapshots of ox 0.14.67's shipped
 * `tempo/*.test.ts`, classified by what ox itself decodes. `invalid.json`: self-made malformed
 * inputs built with ox's RLP encoder, each with the error our parser must give.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Hex, Rlp } from 'ox';
import { TxEnvelopeTempo } from 'ox/tempo';

const dir = new URL('.', import.meta.url);
const require = createRequire(import.meta.url);
const oxTempo = join(dirname(require.resolve('ox/package.json')), 'tempo');

type Kind = 'unsigned' | 'signed' | 'feePayerPreimage' | 'unsupported' | 'invalid';
interface OxVector {
  name: string;
  source: string;
  kind: Kind;
  hex: string;
  /** signed: the sender ox recovers. */
  from?: string;
  /** unsupported/invalid: the transaction field our parser must name. */
  field?: string;
}

const vectors: OxVector[] = [];
const seen = new Set<string>();
for (const file of readdirSync(oxTempo).filter((f) => f.endsWith('.test.ts')).sort()) {
  const text = readFileSync(join(oxTempo, file), 'utf8');
  for (const m of text.matchAll(/0x7[68][0-9a-f]{4,}/g)) {
    const hex = m[0] as Hex.Hex;
    // A 32-byte hash that happens to start with 0x78 is not a serialization.
    if (hex.length === 66 || seen.has(hex)) continue;
    seen.add(hex);
    const before = text.slice(0, m.index);
    const names = [...before.matchAll(/test\('([^']+)'/g)].map((t) => t[1]);
    const name = `${file.replace('.test.ts', '')}: ${names.at(-1) ?? 'top level'}`;
    vectors.push({ name, source: `ox@0.14.67 tempo/${file}`, ...classify(hex) });
  }
}

function classify(hex: Hex.Hex): Pick<OxVector, 'kind' | 'hex' | 'from' | 'field'> {
  if (hex.startsWith('0x78')) return { kind: 'feePayerPreimage', hex };
  let tx: ReturnType<typeof TxEnvelopeTempo.deserialize>;
  try {
    tx = TxEnvelopeTempo.deserialize(hex as TxEnvelopeTempo.Serialized);
  } catch {
    return { kind: 'invalid', hex, field: 'transaction' };
  }
  if (tx.keyAuthorization) return { kind: 'unsupported', hex, field: 'key_authorization' };
  if (tx.authorizationList?.length) return { kind: 'unsupported', hex, field: 'authorization_list' };
  if (tx.signature) {
    if (tx.signature.type !== 'secp256k1') return { kind: 'unsupported', hex, field: 'signature' };
    return { kind: 'signed', hex, from: tx.from as string };
  }
  // A fee payer signature without a sender signature is not an unsigned transaction for us.
  if (tx.feePayerSignature) return { kind: 'invalid', hex, field: 'fee_payer_signature' };
  return { kind: 'unsigned', hex };
}

writeFileSync(
  new URL('ox.json', dir),
  `${JSON.stringify(
    {
      _comment:
        'Serialized Tempo envelopes from the inline snapshots of ox 0.14.67 tempo/*.test.ts (the npm package ships them); kind as ox decodes them. Regenerate with generate.ts.',
      vectors,
    },
    null,
    2,
  )}\n`,
);

// Self-made malformed inputs.
const to = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const token = '0x20c0000000000000000000000000000000000000';
type Item = Hex.Hex | readonly Item[];
/** A canonical unsigned body; `patch` replaces fields by index. */
function body(patch: Record<number, Item> = {}, extra: Hex.Hex[] = []): Hex.Hex {
  const f: Item[] = [
    '0x01', // chainId
    '0x01', // maxPriorityFeePerGas
    '0x02', // maxFeePerGas
    '0x5208', // gas
    [[to, '0x', '0x']], // calls
    [], // accessList
    '0x', // nonceKey
    '0x', // nonce
    '0x', // validBefore
    '0x', // validAfter
    '0x', // feeToken
    '0x', // fee payer slot
    [], // authorizationList
  ];
  for (const [i, v] of Object.entries(patch)) f[Number(i)] = v;
  return `0x76${Rlp.fromHex([...f, ...extra]).slice(2)}` as Hex.Hex;
}

interface Invalid {
  name: string;
  hex: string;
  code: string;
  message: string;
}
const ok = body();
TxEnvelopeTempo.deserialize(ok as TxEnvelopeTempo.Serialized); // the base case is valid for ox
const invalid: Invalid[] = [
  { name: 'empty input', hex: '0x', code: 'TEMPO_MALFORMED_TRANSACTION', message: 'transaction: is empty' },
  { name: 'unknown type byte 0x77', hex: '0x77c0', code: 'TRANSACTION_TYPE_UNSUPPORTED', message: '0x77' },
  {
    name: 'an EIP-1559 transaction',
    hex: '0x02c0',
    code: 'TRANSACTION_TYPE_UNSUPPORTED',
    message: 'use the ethereum adapter',
  },
  {
    name: 'the 0x78 fee payer preimage',
    hex: `0x78${ok.slice(4)}`,
    code: 'TRANSACTION_TYPE_UNSUPPORTED',
    message: 'fee payer signing preimage',
  },
  { name: 'empty field list', hex: '0x76c0', code: 'TEMPO_MALFORMED_TRANSACTION', message: 'has 0 fields' },
  { name: 'one trailing byte', hex: `${ok}00`, code: 'TEMPO_MALFORMED_TRANSACTION', message: 'trailing byte' },
  { name: 'truncated', hex: ok.slice(0, -2), code: 'TEMPO_MALFORMED_TRANSACTION', message: 'truncated' },
  { name: 'payload is an RLP string', hex: '0x7683010203', code: 'TEMPO_MALFORMED_TRANSACTION', message: 'payload is not an RLP list' },
  { name: 'empty calls list', hex: body({ 4: [] }), code: 'TEMPO_MALFORMED_TRANSACTION', message: 'calls: must hold at least one call' },
  {
    name: 'valid_before equal to valid_after',
    hex: body({ 8: '0x6553f100', 9: '0x6553f100' }),
    code: 'TEMPO_MALFORMED_TRANSACTION',
    message: 'valid_before: (1700000000) must be greater than valid_after (1700000000)',
  },
  {
    name: 'valid_before before valid_after',
    hex: body({ 8: '0x64', 9: '0xc8' }),
    code: 'TEMPO_MALFORMED_TRANSACTION',
    message: 'valid_before: (100) must be greater than valid_after (200)',
  },
  {
    // ox serializes validAfter: 0 this way; anvil --network tempo answers "Failed to decode transaction".
    name: 'valid_after 0 written as the non-canonical 0x00',
    hex: TxEnvelopeTempo.serialize({ chainId: 1, calls: [{ to }], validAfter: 0, validBefore: 10 }),
    code: 'TEMPO_MALFORMED_TRANSACTION',
    message: 'valid_after: integer has a leading zero byte',
  },
  { name: '12 fields', hex: `0x76${Rlp.fromHex((Rlp.toHex(`0x${ok.slice(4)}`) as Hex.Hex[]).slice(0, 12)).slice(2)}`, code: 'TEMPO_MALFORMED_TRANSACTION', message: 'has 12 fields' },
  { name: 'nonce with a leading zero', hex: body({ 7: '0x0001' }), code: 'TEMPO_MALFORMED_TRANSACTION', message: 'nonce: integer has a leading zero byte' },
  { name: 'value 0 written as 0x00', hex: body({ 4: [[to, '0x00', '0x']] }), code: 'TEMPO_MALFORMED_TRANSACTION', message: 'calls[0].value' },
  { name: 'access list as an empty string', hex: body({ 5: '0x' }), code: 'TEMPO_MALFORMED_TRANSACTION', message: 'access_list: expected a list' },
  { name: 'call with two fields', hex: body({ 4: [[to, '0x']] }), code: 'TEMPO_MALFORMED_TRANSACTION', message: 'calls[0]: has 2 fields' },
  { name: 'call to a 19-byte address', hex: body({ 4: [[`0x${'11'.repeat(19)}`, '0x', '0x']] }), code: 'TEMPO_MALFORMED_TRANSACTION', message: 'calls[0].to' },
  { name: 'fee token of 19 bytes', hex: body({ 10: `0x${'22'.repeat(19)}` }), code: 'TEMPO_MALFORMED_TRANSACTION', message: 'fee_token' },
  { name: 'chain id 0', hex: body({ 0: '0x' }), code: 'TEMPO_MALFORMED_TRANSACTION', message: 'chain_id' },
  { name: 'gas wider than 64 bits', hex: body({ 3: `0x01${'00'.repeat(8)}` }), code: 'TEMPO_MALFORMED_TRANSACTION', message: 'gas_limit' },
  { name: 'tip above the fee cap', hex: body({ 1: '0x03' }), code: 'TEMPO_MALFORMED_TRANSACTION', message: 'max_priority_fee_per_gas' },
  {
    name: 'fee token next to the 0x00 fee payer marker',
    hex: body({ 10: token, 11: '0x00' }),
    code: 'TEMPO_MALFORMED_TRANSACTION',
    message: 'fee_token: must be empty next to the 0x00 fee payer marker',
  },
  {
    name: 'sender address in the fee payer slot of a 0x76 envelope',
    hex: body({ 11: to }),
    code: 'TEMPO_MALFORMED_TRANSACTION',
    message: 'fee_payer_signature: holds a sender address',
  },
  { name: 'fee payer slot 0x01', hex: body({ 11: '0x01' }), code: 'TEMPO_MALFORMED_TRANSACTION', message: 'fee_payer_signature' },
  {
    name: 'non-empty authorization list',
    hex: body({ 12: [['0x01', to, '0x', `0x${'33'.repeat(65)}`]] }),
    code: 'TEMPO_UNSUPPORTED_FEATURE',
    message: 'authorization_list: delegating the account (authorization_list) is not supported',
  },
  {
    name: 'a signed envelope given as unsigned',
    hex: body({}, [`0x${'44'.repeat(64)}1b`]),
    code: 'TEMPO_MALFORMED_TRANSACTION',
    message: 'already carries a signature',
  },
];
writeFileSync(
  new URL('invalid.json', dir),
  `${JSON.stringify(
    {
      _comment:
        'Self-made malformed or refused unsigned Tempo inputs (built with ox Rlp, see generate.ts); `message` is a substring the error message must contain.',
      unsigned: invalid,
    },
    null,
    2,
  )}\n`,
);
console.log(`${vectors.length} ox vectors, ${invalid.length} invalid inputs`);
