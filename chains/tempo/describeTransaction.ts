import { bytesTo0x } from '../../src/shared/encoding.js';
import type { TempoTransaction } from './types.js';

/**
 * The `tempo.tx` facts policies read (turnkey-api.md 8.3): addresses and data lower-case 0x hex
 * (`to` is '' for a contract creation, `fee_token` '' when unset), numbers bigint, unset validity
 * bounds 0. `function_signature` is the 4-byte selector ('' when the input is shorter). Beyond
 * Turnkey's list: `nonce_key`, `sponsored` and each call's `value`, so a policy can see them.
 */
export function describeTransaction(tx: TempoTransaction, from: string): Record<string, unknown> {
  return {
    chain_id: tx.chainId,
    from: from.toLowerCase(),
    nonce: tx.nonce,
    nonce_key: tx.nonceKey,
    gas_limit: tx.gasLimit,
    max_fee_per_gas: tx.maxFeePerGas,
    max_priority_fee_per_gas: tx.maxPriorityFeePerGas,
    fee_token: tx.feeToken === null ? '' : bytesTo0x(tx.feeToken),
    valid_before: tx.validBefore ?? 0n,
    valid_after: tx.validAfter ?? 0n,
    sponsored: tx.sponsored,
    calls: tx.calls.map((c) => ({
      to: c.to === null ? '' : bytesTo0x(c.to),
      value: c.value,
      input: bytesTo0x(c.data),
      function_signature: c.data.length >= 4 ? bytesTo0x(c.data.subarray(0, 4)) : '',
    })),
  };
}
