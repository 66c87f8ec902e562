import fc from 'fast-check';
import { TronWeb } from 'tronweb';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { fieldsFromJson, toHex, transactionVectors } from '../../test/vectors/tron/vectors.js';
import { rawDataFromFields } from './rawDataFromFields.js';
import type { TronTransactionFields } from './types.js';

const buildable = transactionVectors.transactions.filter((v) => v.fields !== null);
const trx = fieldsFromJson(transactionVectors.transactions[0]!.fields!);
const trc20 = fieldsFromJson(transactionVectors.transactions[3]!.fields!);
const OTHER = transactionVectors.recipient;

function expectFieldError(fields: TronTransactionFields, code: string, field: string, message: string): void {
  let err: unknown;
  try {
    rawDataFromFields(fields);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(CountersignError);
  expect((err as CountersignError).code).toBe(code);
  expect((err as CountersignError).field).toBe(field);
  expect((err as CountersignError).message).toContain(message);
}

describe.each(buildable)('rawDataFromFields for $name', (v) => {
  it("builds tronweb's raw_data byte for byte", () => {
    expect(toHex(rawDataFromFields(fieldsFromJson(v.fields!)))).toBe(v.rawDataHex);
  });

  it('accepts the matching expected txID in any case, with or without 0x', () => {
    for (const id of [v.txID, v.txID.toUpperCase(), `0x${v.txID}`]) {
      expect(toHex(rawDataFromFields({ ...fieldsFromJson(v.fields!), expectedTxId: id }))).toBe(v.rawDataHex);
    }
  });
});

describe('rawDataFromFields against tronweb 6.5.1 built offline (random inputs)', () => {
  const tw = new TronWeb({ fullHost: 'http://127.0.0.1:9' });
  const address = fc
    .uint8Array({ minLength: 20, maxLength: 20 })
    .map((b) => TronWeb.address.fromHex(`41${toHex(b)}`));
  const header = fc.record({
    ref_block_bytes: fc.uint8Array({ minLength: 2, maxLength: 2 }).map(toHex),
    ref_block_hash: fc.uint8Array({ minLength: 8, maxLength: 8 }).map(toHex),
    expiration: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
    timestamp: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  });
  const common = (h: {
    ref_block_bytes: string;
    ref_block_hash: string;
    expiration: number;
    timestamp: number;
  }) => ({
    refBlockBytes: h.ref_block_bytes,
    refBlockHash: h.ref_block_hash,
    expiration: String(h.expiration),
    timestamp: String(h.timestamp),
    expectedTxId: '',
  });
  const memo = fc.option(fc.uint8Array({ minLength: 1, maxLength: 40 }), { nil: undefined });

  it('TRX transfers', async () => {
    await fc.assert(
      fc.asyncProperty(
        address,
        address,
        fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
        header,
        fc.integer({ min: 0, max: 20 }),
        memo,
        async (owner, to, amount, blockHeader, permissionId, data) => {
          fc.pre(owner !== to);
          let tx = await tw.transactionBuilder.sendTrx(to, amount, owner, { blockHeader, permissionId });
          if (data !== undefined)
            tx = await tw.transactionBuilder.addUpdateData(tx, toHex(data), 'hex', { txLocal: true });
          const ours = rawDataFromFields({
            kind: 'TRX_TRANSFER',
            ownerAddress: owner,
            toAddress: to,
            amount: String(amount),
            tokenContract: '',
            feeLimit: '',
            memo: data ?? new Uint8Array(0),
            permissionId,
            ...common(blockHeader),
          });
          expect(toHex(ours)).toBe(tx.raw_data_hex);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('TRC-20 transfers', async () => {
    await fc.assert(
      fc.asyncProperty(
        address,
        address,
        address,
        fc.bigInt({ min: 0n, max: (1n << 256n) - 1n }),
        fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
        header,
        fc.integer({ min: 0, max: 20 }),
        memo,
        async (owner, to, token, amount, feeLimit, blockHeader, permissionId, data) => {
          let tx = (
            await tw.transactionBuilder.triggerSmartContract(
              token,
              'transfer(address,uint256)',
              { feeLimit, blockHeader, txLocal: true, permissionId },
              [
                { type: 'address', value: to },
                { type: 'uint256', value: amount.toString() },
              ],
              owner,
            )
          ).transaction;
          if (data !== undefined)
            tx = await tw.transactionBuilder.addUpdateData(tx, toHex(data), 'hex', { txLocal: true });
          const ours = rawDataFromFields({
            kind: 'TRC20_TRANSFER',
            ownerAddress: owner,
            toAddress: to,
            amount: amount.toString(),
            tokenContract: token,
            feeLimit: String(feeLimit),
            memo: data ?? new Uint8Array(0),
            permissionId,
            ...common(blockHeader),
          });
          expect(toHex(ours)).toBe(tx.raw_data_hex);
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('rawDataFromFields refuses bad fields, naming the proto field', () => {
  it.each<[string, Partial<TronTransactionFields>, TronTransactionFields, string, string, string]>([
    ['no kind', { kind: 'UNSPECIFIED' }, trx, 'FIELD_MISSING', 'tron.kind', 'is required'],
    ['an unknown kind', { kind: 'NFT' as never }, trx, 'FIELD_INVALID', 'tron.kind', 'not a known'],
    ['no owner', { ownerAddress: '' }, trx, 'FIELD_MISSING', 'tron.owner_address', 'is required'],
    [
      'a bad owner checksum',
      { ownerAddress: 'TYBNgWfhGuNzdLtjKtxXTfskAhTbMcqbaH' },
      trx,
      'FIELD_INVALID',
      'tron.owner_address',
      'checksum',
    ],
    [
      'an Ethereum-style recipient',
      { toAddress: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' },
      trx,
      'FIELD_INVALID',
      'tron.to_address',
      'base58check',
    ],
    [
      'a transfer to oneself',
      { toAddress: trx.ownerAddress },
      trx,
      'FIELD_INVALID',
      'tron.to_address',
      'must differ',
    ],
    ['no amount', { amount: '' }, trx, 'FIELD_MISSING', 'tron.amount', 'is required'],
    ['a zero TRX amount', { amount: '0' }, trx, 'FIELD_INVALID', 'tron.amount', 'at least 1'],
    [
      'a TRX amount of 2^63',
      { amount: (1n << 63n).toString() },
      trx,
      'FIELD_INVALID',
      'tron.amount',
      'at most',
    ],
    ['a negative amount', { amount: '-1' }, trx, 'FIELD_INVALID', 'tron.amount', 'decimal'],
    ['a hex amount', { amount: '0x10' }, trx, 'FIELD_INVALID', 'tron.amount', 'decimal'],
    [
      'a fee_limit on a TRX transfer',
      { feeLimit: '1' },
      trx,
      'FIELD_INVALID',
      'tron.fee_limit',
      'not used by a TRX transfer',
    ],
    [
      'a token on a TRX transfer',
      { tokenContract: OTHER },
      trx,
      'FIELD_INVALID',
      'tron.token_contract',
      'not used',
    ],
    [
      'no token contract',
      { tokenContract: '' },
      trc20,
      'FIELD_MISSING',
      'tron.token_contract',
      'is required',
    ],
    ['no fee_limit on TRC-20', { feeLimit: '' }, trc20, 'FIELD_MISSING', 'tron.fee_limit', 'is required'],
    ['a zero fee_limit', { feeLimit: '0' }, trc20, 'FIELD_INVALID', 'tron.fee_limit', 'at least 1'],
    [
      'a TRC-20 amount of 2^256',
      { amount: (1n << 256n).toString() },
      trc20,
      'FIELD_INVALID',
      'tron.amount',
      'at most',
    ],
    [
      'ref_block_bytes of 3 bytes',
      { refBlockBytes: '1a2b3c' },
      trx,
      'FIELD_INVALID',
      'tron.ref_block_bytes',
      'must be 2 bytes',
    ],
    [
      'ref_block_bytes not hex',
      { refBlockBytes: 'zz11' },
      trx,
      'FIELD_INVALID',
      'tron.ref_block_bytes',
      'not a hex',
    ],
    ['no ref_block_hash', { refBlockHash: '' }, trx, 'FIELD_MISSING', 'tron.ref_block_hash', 'is required'],
    [
      'ref_block_hash of 7 bytes',
      { refBlockHash: '00112233445566' },
      trx,
      'FIELD_INVALID',
      'tron.ref_block_hash',
      'must be 8 bytes',
    ],
    ['no expiration', { expiration: '' }, trx, 'FIELD_MISSING', 'tron.expiration', 'is required'],
    ['no timestamp', { timestamp: '' }, trx, 'FIELD_MISSING', 'tron.timestamp', 'is required'],
    [
      'a negative permission id',
      { permissionId: -1 },
      trx,
      'FIELD_INVALID',
      'tron.permission_id',
      'non-negative',
    ],
    [
      'a fractional permission id',
      { permissionId: 1.5 },
      trx,
      'FIELD_INVALID',
      'tron.permission_id',
      'non-negative',
    ],
    [
      'a malformed expected txID',
      { expectedTxId: 'abcd' },
      trx,
      'FIELD_INVALID',
      'tron.expected_tx_id',
      '32-byte hex',
    ],
    [
      'an expected txID that differs',
      { expectedTxId: 'ab'.repeat(32) },
      trx,
      'TRON_TXID_MISMATCH',
      'tron.expected_tx_id',
      'does not match sha256(raw_data)',
    ],
  ])('rejects %s', (_name, change, fields, code, field, message) => {
    expectFieldError({ ...fields, ...change }, code, field, message);
  });

  it('accepts a 41-hex address for every address field', () => {
    const hexOf = (a: string) => TronWeb.address.toHex(a);
    const out = rawDataFromFields({
      ...trc20,
      ownerAddress: hexOf(trc20.ownerAddress),
      toAddress: hexOf(trc20.toAddress).toUpperCase().replace(/^41/, '41'),
      tokenContract: hexOf(trc20.tokenContract),
    });
    expect(toHex(out)).toBe(transactionVectors.transactions[3]!.rawDataHex);
  });
});
