import { parseDecimal, UINT256_MAX, UINT64_MAX } from '../../src/shared/encoding.js';
import { invalid, missing } from '../../src/shared/errors.js';
import { checkTransaction } from './envelope.js';
import { parseAddress } from './parseAddress.js';
import {
  MAX_TX_NONCE,
  type EthAccessListItem,
  type EthAuthorization,
  type EthTransaction,
  type EthTransactionFields,
  type EthTxType,
} from './types.js';

const P = 'ethereum';

const TYPE_OF_FIELD: Record<EthTransactionFields['type'], EthTxType> = {
  // proto: structured input without a type means EIP-1559.
  UNSPECIFIED: 'eip1559',
  LEGACY: 'legacy',
  EIP2930: 'eip2930',
  EIP1559: 'eip1559',
  EIP4844: 'eip4844',
  EIP7702: 'eip7702',
};

function required(value: string, name: string, max = UINT256_MAX): bigint {
  if (value === '') throw missing(`${P}.${name}`);
  return parseDecimal(value, `${P}.${name}`, max);
}

function optional(value: string, name: string, max = UINT256_MAX): bigint {
  return value === '' ? 0n : parseDecimal(value, `${P}.${name}`, max);
}

function absent(present: boolean, name: string, type: EthTxType): void {
  if (present) throw invalid(`${P}.${name}`, `is not used by a ${type} transaction; leave it empty`);
}

function fixedBytes(value: Uint8Array, field: string, size: number): Uint8Array {
  if (value.length !== size) throw invalid(field, `must be ${size} bytes, got ${value.length}`);
  return value.slice();
}

/** An unsigned integer from big-endian proto bytes (at most 32 bytes). */
function bytesUint(value: Uint8Array, field: string): bigint {
  if (value.length > 32) throw invalid(field, `must be at most 32 bytes, got ${value.length}`);
  return value.length === 0 ? 0n : BigInt(`0x${Buffer.from(value).toString('hex')}`);
}

/**
 * Validates the structured gRPC fields into a transaction. Errors name the proto field
 * (`ethereum.max_fee_per_gas`); numbers are decimal strings; addresses 0x hex (EIP-55 if mixed case).
 */
export function transactionFromFields(fields: EthTransactionFields): EthTransaction {
  const type: EthTxType | undefined = Object.hasOwn(TYPE_OF_FIELD, fields.type)
    ? TYPE_OF_FIELD[fields.type]
    : undefined;
  if (type === undefined) throw invalid(`${P}.type`, 'is not a known Ethereum transaction type');

  let chainId: bigint | undefined;
  if (fields.legacyWithoutChainId) {
    absent(type !== 'legacy', 'legacy_without_chain_id', type);
    if (fields.chainId !== '')
      throw invalid(`${P}.chain_id`, 'must be empty when legacy_without_chain_id is set');
    chainId = undefined;
  } else {
    chainId = required(fields.chainId, 'chain_id');
  }

  const feeMarket = type === 'eip1559' || type === 'eip4844' || type === 'eip7702';
  const fees: { gasPrice?: bigint; maxFeePerGas?: bigint; maxPriorityFeePerGas?: bigint } = {};
  if (feeMarket) {
    absent(fields.gasPrice !== '', 'gas_price', type);
    fees.maxFeePerGas = required(fields.maxFeePerGas, 'max_fee_per_gas');
    fees.maxPriorityFeePerGas = required(fields.maxPriorityFeePerGas, 'max_priority_fee_per_gas');
  } else {
    absent(fields.maxFeePerGas !== '', 'max_fee_per_gas', type);
    absent(fields.maxPriorityFeePerGas !== '', 'max_priority_fee_per_gas', type);
    fees.gasPrice = required(fields.gasPrice, 'gas_price');
  }

  absent(type === 'legacy' && fields.accessList.length > 0, 'access_list', type);
  const accessList: EthAccessListItem[] = fields.accessList.map((e, i) => ({
    address: parseAddress(e.address, `${P}.access_list[${i}].address`),
    storageKeys: e.storageKeys.map((k, j) => fixedBytes(k, `${P}.access_list[${i}].storage_keys[${j}]`, 32)),
  }));

  const base = {
    chainId,
    nonce: required(fields.nonce, 'nonce', MAX_TX_NONCE),
    gasLimit: required(fields.gasLimit, 'gas_limit', UINT64_MAX),
    ...fees,
    to: fields.to === '' ? null : parseAddress(fields.to, `${P}.to`),
    value: optional(fields.value, 'value'),
    data: fields.data.slice(),
    accessList,
  };

  let tx: EthTransaction;
  if (type === 'eip4844') {
    if (fields.maxFeePerBlobGas === '') throw missing(`${P}.max_fee_per_blob_gas`);
    if (fields.blobVersionedHashes.length === 0) throw missing(`${P}.blob_versioned_hashes`);
    tx = {
      type,
      ...base,
      maxFeePerBlobGas: required(fields.maxFeePerBlobGas, 'max_fee_per_blob_gas'),
      blobVersionedHashes: fields.blobVersionedHashes.map((h, i) =>
        fixedBytes(h, `${P}.blob_versioned_hashes[${i}]`, 32),
      ),
    };
  } else {
    absent(fields.maxFeePerBlobGas !== '', 'max_fee_per_blob_gas', type);
    absent(fields.blobVersionedHashes.length > 0, 'blob_versioned_hashes', type);
    if (type === 'eip7702') {
      if (fields.authorizationList.length === 0) throw missing(`${P}.authorization_list`);
      tx = { type, ...base, authorizationList: fields.authorizationList.map(authorizationFromFields) };
    } else {
      absent(fields.authorizationList.length > 0, 'authorization_list', type);
      tx = { type, ...base };
    }
  }
  if (type === 'eip4844' || type === 'eip7702') {
    if (tx.to === null) throw missing(`${P}.to`);
  }
  checkTransaction(tx, (field, reason) => invalid(`${P}.${field}`, reason));
  return tx;
}

function authorizationFromFields(
  a: EthTransactionFields['authorizationList'][number],
  i: number,
): EthAuthorization {
  const f = `${P}.authorization_list[${i}]`;
  // EIP-7702 tuple bounds: chain_id < 2^256, nonce < 2^64, y_parity < 2^8, r and s < 2^256.
  if (!Number.isInteger(a.yParity) || a.yParity < 0 || a.yParity > 255) {
    throw invalid(`${f}.y_parity`, 'must be an integer below 256 (0 or 1 for a valid signature)');
  }
  if (a.chainId === '') throw missing(`${f}.chain_id`);
  if (a.nonce === '') throw missing(`${f}.nonce`);
  return {
    chainId: parseDecimal(a.chainId, `${f}.chain_id`, UINT256_MAX),
    address: parseAddress(a.address, `${f}.address`),
    nonce: parseDecimal(a.nonce, `${f}.nonce`, UINT64_MAX),
    yParity: a.yParity,
    r: bytesUint(a.r, `${f}.r`),
    s: bytesUint(a.s, `${f}.s`),
  };
}
