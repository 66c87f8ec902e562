import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { transactionFromFields } from './transactionFromFields.js';
import type { EthTransactionFields } from './types.js';

const TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const KEY = new Uint8Array(32).fill(1);
const BLOB = Uint8Array.of(1, ...new Uint8Array(31).fill(2));

const eip1559: EthTransactionFields = {
  type: 'EIP1559',
  chainId: '1',
  nonce: '0',
  to: TO,
  value: '',
  data: new Uint8Array(0),
  gasLimit: '21000',
  gasPrice: '',
  maxFeePerGas: '100',
  maxPriorityFeePerGas: '2',
  accessList: [],
  maxFeePerBlobGas: '',
  blobVersionedHashes: [],
  authorizationList: [],
  legacyWithoutChainId: false,
};
const legacy: EthTransactionFields = {
  ...eip1559,
  type: 'LEGACY',
  maxFeePerGas: '',
  maxPriorityFeePerGas: '',
  gasPrice: '7',
};
const eip4844: EthTransactionFields = {
  ...eip1559,
  type: 'EIP4844',
  maxFeePerBlobGas: '3',
  blobVersionedHashes: [BLOB],
};
const auth = { chainId: '1', address: TO, nonce: '0', yParity: 1, r: KEY, s: KEY };
const eip7702: EthTransactionFields = { ...eip1559, type: 'EIP7702', authorizationList: [auth] };

function expectError(fields: EthTransactionFields, code: string, field: string, reason?: string): void {
  let err: unknown;
  try {
    transactionFromFields(fields);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(CountersignError);
  expect((err as CountersignError).code).toBe(code);
  expect((err as CountersignError).field).toBe(field);
  expect((err as CountersignError).message.startsWith(`${field}: `)).toBe(true);
  if (reason !== undefined) expect((err as CountersignError).message).toContain(reason);
}

describe('transactionFromFields accepts', () => {
  it('UNSPECIFIED as EIP-1559', () => {
    expect(transactionFromFields({ ...eip1559, type: 'UNSPECIFIED' }).type).toBe('eip1559');
  });

  it('an empty value as 0 and an empty to as contract creation', () => {
    const tx = transactionFromFields({ ...eip1559, to: '' });
    expect(tx.value).toBe(0n);
    expect(tx.to).toBeNull();
  });

  it.each([TO, TO.toLowerCase(), `0x${TO.slice(2).toUpperCase()}`])(
    'the address %s in any single case or checksummed',
    (to) => {
      expect(Buffer.from(transactionFromFields({ ...eip1559, to }).to!).toString('hex')).toBe(
        TO.slice(2).toLowerCase(),
      );
    },
  );

  it('a legacy transaction without chain id only when asked for explicitly', () => {
    expect(
      transactionFromFields({ ...legacy, chainId: '', legacyWithoutChainId: true }).chainId,
    ).toBeUndefined();
  });

  it('uint256 max, the EIP-2681 nonce bound and a uint64 gas limit', () => {
    const max = ((1n << 256n) - 1n).toString();
    const tx = transactionFromFields({
      ...eip1559,
      value: max,
      nonce: ((1n << 64n) - 2n).toString(),
      gasLimit: ((1n << 64n) - 1n).toString(),
    });
    expect(tx.value).toBe((1n << 256n) - 1n);
    expect(tx.gasLimit).toBe((1n << 64n) - 1n);
  });

  it('authorization tuples at the EIP-7702 bounds (chain id 0, y-parity 255, nonce 2^64-1)', () => {
    const tx = transactionFromFields({
      ...eip7702,
      authorizationList: [{ ...auth, chainId: '0', yParity: 255, nonce: ((1n << 64n) - 1n).toString() }],
    });
    expect(tx.authorizationList?.[0]?.yParity).toBe(255);
  });

  it('copies byte fields instead of aliasing the request', () => {
    const data = Uint8Array.of(1, 2, 3);
    const tx = transactionFromFields({ ...eip1559, data });
    data.fill(0);
    expect(Array.from(tx.data)).toEqual([1, 2, 3]);
  });
});

describe('transactionFromFields rejects', () => {
  it.each([
    ['an unknown type', { ...eip1559, type: 'EIP9999' as 'EIP1559' }, 'FIELD_INVALID', 'ethereum.type'],
    ['a missing chain id', { ...eip1559, chainId: '' }, 'FIELD_MISSING', 'ethereum.chain_id'],
    [
      'a legacy tx without chain id unless asked',
      { ...legacy, chainId: '' },
      'FIELD_MISSING',
      'ethereum.chain_id',
    ],
    ['chain id 0', { ...eip1559, chainId: '0' }, 'FIELD_INVALID', 'ethereum.chain_id', 'positive'],
    ['a hex chain id', { ...eip1559, chainId: '0x1' }, 'FIELD_INVALID', 'ethereum.chain_id', 'decimal'],
    ['a chain id with a leading zero', { ...eip1559, chainId: '01' }, 'FIELD_INVALID', 'ethereum.chain_id'],
    ['a negative value', { ...eip1559, value: '-1' }, 'FIELD_INVALID', 'ethereum.value'],
    [
      'a value above uint256',
      { ...eip1559, value: (1n << 256n).toString() },
      'FIELD_INVALID',
      'ethereum.value',
    ],
    [
      'legacy_without_chain_id on EIP-1559',
      { ...eip1559, chainId: '', legacyWithoutChainId: true },
      'FIELD_INVALID',
      'ethereum.legacy_without_chain_id',
    ],
    [
      'legacy_without_chain_id with a chain id',
      { ...legacy, legacyWithoutChainId: true },
      'FIELD_INVALID',
      'ethereum.chain_id',
    ],
    ['a missing nonce', { ...eip1559, nonce: '' }, 'FIELD_MISSING', 'ethereum.nonce'],
    [
      'nonce 2^64-1 (EIP-2681)',
      { ...eip1559, nonce: ((1n << 64n) - 1n).toString() },
      'FIELD_INVALID',
      'ethereum.nonce',
    ],
    ['a missing gas limit', { ...eip1559, gasLimit: '' }, 'FIELD_MISSING', 'ethereum.gas_limit'],
    [
      'a gas limit of 2^64',
      { ...eip1559, gasLimit: (1n << 64n).toString() },
      'FIELD_INVALID',
      'ethereum.gas_limit',
    ],
    ['gas_price on EIP-1559', { ...eip1559, gasPrice: '1' }, 'FIELD_INVALID', 'ethereum.gas_price'],
    [
      'a missing max fee on EIP-1559',
      { ...eip1559, maxFeePerGas: '' },
      'FIELD_MISSING',
      'ethereum.max_fee_per_gas',
    ],
    [
      'a missing priority fee on EIP-1559',
      { ...eip1559, maxPriorityFeePerGas: '' },
      'FIELD_MISSING',
      'ethereum.max_priority_fee_per_gas',
    ],
    [
      'a priority fee above the fee cap',
      { ...eip1559, maxPriorityFeePerGas: '101' },
      'FIELD_INVALID',
      'ethereum.max_priority_fee_per_gas',
    ],
    ['a missing gas price on legacy', { ...legacy, gasPrice: '' }, 'FIELD_MISSING', 'ethereum.gas_price'],
    [
      'max_fee_per_gas on legacy',
      { ...legacy, maxFeePerGas: '1' },
      'FIELD_INVALID',
      'ethereum.max_fee_per_gas',
    ],
    [
      'an access list on legacy',
      { ...legacy, accessList: [{ address: TO, storageKeys: [] }] },
      'FIELD_INVALID',
      'ethereum.access_list',
    ],
    ['a to without 0x', { ...eip1559, to: TO.slice(2) }, 'FIELD_INVALID', 'ethereum.to'],
    ['a to of 19 bytes', { ...eip1559, to: TO.slice(0, 40) }, 'FIELD_INVALID', 'ethereum.to'],
    [
      'a mixed-case to with a wrong checksum',
      { ...eip1559, to: TO.replace('C51', 'c51') },
      'FIELD_INVALID',
      'ethereum.to',
      'checksum',
    ],
    [
      'a bad access-list address',
      { ...eip1559, accessList: [{ address: '0x12', storageKeys: [] }] },
      'FIELD_INVALID',
      'ethereum.access_list[0].address',
    ],
    [
      'a 31-byte storage key',
      { ...eip1559, accessList: [{ address: TO, storageKeys: [KEY, KEY.subarray(1)] }] },
      'FIELD_INVALID',
      'ethereum.access_list[0].storage_keys[1]',
    ],
    ['4844 without to', { ...eip4844, to: '' }, 'FIELD_MISSING', 'ethereum.to'],
    [
      '4844 without blob hashes',
      { ...eip4844, blobVersionedHashes: [] },
      'FIELD_MISSING',
      'ethereum.blob_versioned_hashes',
    ],
    [
      '4844 without max_fee_per_blob_gas',
      { ...eip4844, maxFeePerBlobGas: '' },
      'FIELD_MISSING',
      'ethereum.max_fee_per_blob_gas',
    ],
    [
      'a 31-byte blob hash',
      { ...eip4844, blobVersionedHashes: [BLOB.subarray(1)] },
      'FIELD_INVALID',
      'ethereum.blob_versioned_hashes[0]',
    ],
    [
      'a blob hash without the 0x01 version',
      { ...eip4844, blobVersionedHashes: [BLOB, new Uint8Array(32).fill(2)] },
      'FIELD_INVALID',
      'ethereum.blob_versioned_hashes[1]',
      '0x01',
    ],
    [
      'blob hashes on EIP-1559',
      { ...eip1559, blobVersionedHashes: [BLOB] },
      'FIELD_INVALID',
      'ethereum.blob_versioned_hashes',
    ],
    [
      'max_fee_per_blob_gas on EIP-1559',
      { ...eip1559, maxFeePerBlobGas: '1' },
      'FIELD_INVALID',
      'ethereum.max_fee_per_blob_gas',
    ],
    ['7702 without to', { ...eip7702, to: '' }, 'FIELD_MISSING', 'ethereum.to'],
    [
      '7702 without authorizations',
      { ...eip7702, authorizationList: [] },
      'FIELD_MISSING',
      'ethereum.authorization_list',
    ],
    [
      'authorizations on EIP-1559',
      { ...eip1559, authorizationList: [auth] },
      'FIELD_INVALID',
      'ethereum.authorization_list',
    ],
    [
      'an authorization y-parity of 256',
      { ...eip7702, authorizationList: [{ ...auth, yParity: 256 }] },
      'FIELD_INVALID',
      'ethereum.authorization_list[0].y_parity',
    ],
    [
      'an authorization nonce of 2^64',
      { ...eip7702, authorizationList: [{ ...auth, nonce: (1n << 64n).toString() }] },
      'FIELD_INVALID',
      'ethereum.authorization_list[0].nonce',
    ],
    [
      'a missing authorization chain id',
      { ...eip7702, authorizationList: [auth, { ...auth, chainId: '' }] },
      'FIELD_MISSING',
      'ethereum.authorization_list[1].chain_id',
    ],
    [
      'an authorization r of 33 bytes',
      { ...eip7702, authorizationList: [{ ...auth, r: new Uint8Array(33) }] },
      'FIELD_INVALID',
      'ethereum.authorization_list[0].r',
    ],
    [
      'a bad authorization address',
      { ...eip7702, authorizationList: [{ ...auth, address: 'nope' }] },
      'FIELD_INVALID',
      'ethereum.authorization_list[0].address',
    ],
  ] as const)('%s', (_name, fields, code, field, reason?: string) => {
    expectError(fields as EthTransactionFields, code, field, reason);
  });
});
