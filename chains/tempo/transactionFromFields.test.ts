import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { arbitraryTransaction } from '../../test/vectors/tempo/arbitraries.js';
import { to0x } from '../../test/vectors/tempo/vectors.js';
import { transactionFromFields } from './transactionFromFields.js';
import type { TempoTransaction, TempoTransactionFields } from './types.js';

const TOKEN = '0x20c0000000000000000000000000000000000001';
const RECIPIENT = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

const fields: TempoTransactionFields = {
  chainId: '42431',
  nonce: '3',
  nonceKey: '5',
  gasLimit: '300000',
  maxFeePerGas: '20000000000',
  maxPriorityFeePerGas: '1',
  calls: [
    { to: TOKEN, value: '', data: Uint8Array.of(0xa9, 0x05, 0x9c, 0xbb) },
    { to: '', value: '0', data: Uint8Array.of(0x60, 0x00) },
  ],
  accessList: [{ address: RECIPIENT, storageKeys: [new Uint8Array(32)] }],
  validBefore: '1700003600',
  validAfter: '1700000000',
  feeToken: TOKEN,
  sponsored: false,
};

/** The inverse mapping, for the property test. */
function toFields(tx: TempoTransaction): TempoTransactionFields {
  return {
    chainId: tx.chainId.toString(),
    nonce: tx.nonce.toString(),
    nonceKey: tx.nonceKey === 0n ? '' : tx.nonceKey.toString(),
    gasLimit: tx.gasLimit.toString(),
    maxFeePerGas: tx.maxFeePerGas.toString(),
    maxPriorityFeePerGas: tx.maxPriorityFeePerGas.toString(),
    calls: tx.calls.map((c) => ({
      to: c.to === null ? '' : to0x(c.to),
      value: c.value.toString(),
      data: c.data,
    })),
    accessList: tx.accessList.map((e) => ({ address: to0x(e.address), storageKeys: [...e.storageKeys] })),
    validBefore: tx.validBefore?.toString() ?? '',
    validAfter: tx.validAfter?.toString() ?? '',
    feeToken: tx.feeToken === null ? '' : to0x(tx.feeToken),
    sponsored: tx.sponsored,
  };
}

function fieldError(patch: Partial<TempoTransactionFields>): CountersignError {
  try {
    transactionFromFields({ ...fields, ...patch });
  } catch (e) {
    if (e instanceof CountersignError) return e;
    throw e;
  }
  throw new Error('accepted');
}

describe('transactionFromFields', () => {
  it('maps the proto fields onto the model', () => {
    const tx = transactionFromFields(fields);
    expect(tx.chainId).toBe(42431n);
    expect(tx.nonceKey).toBe(5n);
    expect(tx.calls[0]!.value).toBe(0n);
    expect(tx.calls[1]!.to).toBeNull();
    expect(to0x(tx.feeToken!)).toBe(TOKEN);
    expect(tx.validBefore).toBe(1700003600n);
    expect(
      transactionFromFields({ ...fields, nonceKey: '', validBefore: '', validAfter: '', feeToken: '' }),
    ).toMatchObject({
      nonceKey: 0n,
      validBefore: null,
      validAfter: null,
      feeToken: null,
    });
  });

  it('maps every valid transaction back to itself', () => {
    fc.assert(
      fc.property(arbitraryTransaction(false), (tx) => {
        expect(transactionFromFields(toFields(tx))).toEqual(tx);
      }),
      { numRuns: 200 },
    );
  });

  it.each([
    [{ calls: [] }, 'FIELD_MISSING', 'tempo.calls'],
    [{ chainId: '' }, 'FIELD_MISSING', 'tempo.chain_id'],
    [{ nonce: '' }, 'FIELD_MISSING', 'tempo.nonce'],
    [{ gasLimit: '' }, 'FIELD_MISSING', 'tempo.gas_limit'],
    [{ chainId: '0' }, 'FIELD_INVALID', 'tempo.chain_id'],
    [{ chainId: '-1' }, 'FIELD_INVALID', 'tempo.chain_id'],
    [{ nonce: '18446744073709551616' }, 'FIELD_INVALID', 'tempo.nonce'],
    [{ maxFeePerGas: (1n << 128n).toString() }, 'FIELD_INVALID', 'tempo.max_fee_per_gas'],
    [{ maxPriorityFeePerGas: '20000000001' }, 'FIELD_INVALID', 'tempo.max_priority_fee_per_gas'],
    [{ validBefore: '1700000000' }, 'FIELD_INVALID', 'tempo.valid_before'],
    [{ validBefore: '1' }, 'FIELD_INVALID', 'tempo.valid_before'],
    [{ validAfter: '0' }, 'FIELD_INVALID', 'tempo.valid_after'],
    [{ feeToken: '0x1234' }, 'FIELD_INVALID', 'tempo.fee_token'],
    [{ feeToken: RECIPIENT.replace('C51', 'c51') }, 'FIELD_INVALID', 'tempo.fee_token'],
    [{ calls: [{ to: 'nope', value: '', data: new Uint8Array() }] }, 'FIELD_INVALID', 'tempo.calls[0].to'],
    [
      { calls: [{ to: TOKEN, value: '1.5', data: new Uint8Array() }] },
      'FIELD_INVALID',
      'tempo.calls[0].value',
    ],
    [
      { accessList: [{ address: TOKEN, storageKeys: [new Uint8Array(31)] }] },
      'FIELD_INVALID',
      'tempo.access_list[0].storage_keys[0]',
    ],
  ] as const)('refuses %o with %s naming %s', (patch, code, field) => {
    const e = fieldError(patch as Partial<TempoTransactionFields>);
    expect(e.code).toBe(code);
    expect(e.message.startsWith(`${field}:`)).toBe(true);
  });

  it('names valid_before when it is not after valid_after', () => {
    expect(fieldError({ validBefore: '1700000000', validAfter: '1700000000' }).message).toBe(
      'tempo.valid_before: (1700000000) must be greater than valid_after (1700000000)',
    );
  });
});
