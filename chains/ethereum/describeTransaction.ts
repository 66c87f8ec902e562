import { bytesTo0x } from '../../src/shared/encoding.js';
import { CountersignError } from '../../src/shared/errors.js';
import type { EthTransaction, EthTxType } from './types.js';

const TYPE_FACT: Record<EthTxType, string> = {
  legacy: 'LEGACY',
  eip2930: 'TYPE_1',
  eip1559: 'TYPE_2',
  eip4844: 'TYPE_3',
  eip7702: 'TYPE_4',
};

/**
 * The `eth.tx` facts policies read. Addresses and data are lower-case 0x hex (`to` is '' for a
 * contract creation); numbers are bigint. Every fact is present for every type, so a policy never
 * errors on a missing field: gas_price is max_fee_per_gas for fee-market types, and for legacy and
 * EIP-2930 both fee caps equal gas_price (how EIP-1559 prices them); chain_id is 0 for a pre-EIP-155
 * transaction and max_fee_per_blob_gas 0 outside EIP-4844.
 */
export function describeTransaction(tx: EthTransaction, from: string): Record<string, unknown> {
  let gasPrice: bigint;
  let maxFee: bigint;
  let maxPriority: bigint;
  switch (tx.type) {
    case 'legacy':
    case 'eip2930':
      gasPrice = tx.gasPrice ?? 0n;
      maxFee = gasPrice;
      maxPriority = gasPrice;
      break;
    case 'eip1559':
    case 'eip4844':
    case 'eip7702':
      maxFee = tx.maxFeePerGas ?? 0n;
      maxPriority = tx.maxPriorityFeePerGas ?? 0n;
      gasPrice = maxFee;
      break;
    default: {
      const never: never = tx.type;
      throw new CountersignError('INTERNAL', `unhandled transaction type ${String(never)}`);
    }
  }
  return {
    from: from.toLowerCase(),
    to: tx.to === null ? '' : bytesTo0x(tx.to),
    data: bytesTo0x(tx.data),
    value: tx.value,
    gas: tx.gasLimit,
    gas_price: gasPrice,
    chain_id: tx.chainId ?? 0n,
    nonce: tx.nonce,
    max_fee_per_gas: maxFee,
    max_priority_fee_per_gas: maxPriority,
    max_fee_per_blob_gas: tx.maxFeePerBlobGas ?? 0n,
    type: TYPE_FACT[tx.type],
  };
}
