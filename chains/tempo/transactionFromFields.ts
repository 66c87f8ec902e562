import { parseDecimal, UINT256_MAX, UINT64_MAX } from '../../src/shared/encoding.js';
import { invalid, missing } from '../../src/shared/errors.js';
import { parseAddress } from '../ethereum/index.js';
import { checkTransaction } from './envelope.js';
import { U128_MAX, type TempoCall, type TempoTransaction, type TempoTransactionFields } from './types.js';

const P = 'tempo';

function required(value: string, name: string, max: bigint): bigint {
  if (value === '') throw missing(`${P}.${name}`);
  return parseDecimal(value, `${P}.${name}`, max);
}

function optional(value: string, name: string, max: bigint): bigint {
  return value === '' ? 0n : parseDecimal(value, `${P}.${name}`, max);
}

function bound(value: string, name: string): bigint | null {
  if (value === '') return null;
  const n = parseDecimal(value, `${P}.${name}`, UINT64_MAX);
  if (n === 0n) throw invalid(`${P}.${name}`, 'must be positive unix seconds; leave it empty for no bound');
  return n;
}

/**
 * Validates the structured gRPC fields into a transaction. Errors name the proto field
 * (`tempo.calls[1].to`); numbers are decimal strings; addresses 0x hex (EIP-55 if mixed case).
 */
export function transactionFromFields(fields: TempoTransactionFields): TempoTransaction {
  if (fields.calls.length === 0) throw missing(`${P}.calls`);
  const calls: TempoCall[] = fields.calls.map((c, i) => ({
    to: c.to === '' ? null : parseAddress(c.to, `${P}.calls[${i}].to`),
    value: optional(c.value, `calls[${i}].value`, UINT256_MAX),
    data: c.data.slice(),
  }));
  const tx: TempoTransaction = {
    chainId: required(fields.chainId, 'chain_id', UINT64_MAX),
    maxPriorityFeePerGas: required(fields.maxPriorityFeePerGas, 'max_priority_fee_per_gas', U128_MAX),
    maxFeePerGas: required(fields.maxFeePerGas, 'max_fee_per_gas', U128_MAX),
    gasLimit: required(fields.gasLimit, 'gas_limit', UINT64_MAX),
    calls,
    accessList: fields.accessList.map((e, i) => ({
      address: parseAddress(e.address, `${P}.access_list[${i}].address`),
      storageKeys: e.storageKeys.map((k, j) => {
        if (k.length !== 32)
          throw invalid(`${P}.access_list[${i}].storage_keys[${j}]`, `must be 32 bytes, got ${k.length}`);
        return k.slice();
      }),
    })),
    nonceKey: optional(fields.nonceKey, 'nonce_key', UINT256_MAX),
    nonce: required(fields.nonce, 'nonce', UINT64_MAX),
    validBefore: bound(fields.validBefore, 'valid_before'),
    validAfter: bound(fields.validAfter, 'valid_after'),
    feeToken: fields.feeToken === '' ? null : parseAddress(fields.feeToken, `${P}.fee_token`),
    sponsored: fields.sponsored,
  };
  checkTransaction(tx, (field, reason) => invalid(`${P}.${field}`, reason));
  return tx;
}
