/**
 * Fills what an eth_send_transaction request left out: the nonce the allocator would give now, the
 * gas limit (estimate + 20 %) and EIP-1559 fees (EIP-1559 base fee of the next block from
 * eth_feeHistory, tip from eth_maxPriorityFeePerGas). Values the caller gave are kept as given.
 */
import { BaseError, toHex } from 'viem';
import { bytesTo0x } from '../../shared/encoding.js';
import { CountersignError } from '../../shared/errors.js';
import type { EthTransaction } from '../../../chains/ethereum/types.js';
import type { EthChain } from './chains.js';

export interface SendRequest {
  readonly chain: EthChain;
  /** Lower-case 0x address of the signing account. */
  readonly from: `0x${string}`;
  readonly to: Uint8Array;
  readonly value: bigint;
  readonly data: Uint8Array;
  readonly nonce: bigint | undefined;
  readonly gasLimit: bigint | undefined;
  readonly maxFeePerGas: bigint | undefined;
  readonly maxPriorityFeePerGas: bigint | undefined;
}

export interface FilledTransaction {
  /** EIP-1559; its nonce is the caller's, or the allocator's prediction (final once allocated). */
  readonly tx: EthTransaction;
  /** The chain's pending nonce of `from` (the allocator never goes below it); 0 if the caller gave one. */
  readonly chainPending: bigint;
}

/** Estimates are low by the gas a state change between estimate and inclusion may add. */
const GAS_MARGIN_NUM = 12n;
const GAS_MARGIN_DEN = 10n;

/** A transport failure of `chain`'s endpoint, named after the request that failed. */
export function upstream(chain: EthChain, what: string, cause: unknown): CountersignError {
  const detail = cause instanceof BaseError ? cause.shortMessage : String(cause);
  return new CountersignError(
    'UPSTREAM_UNAVAILABLE',
    `parameters.caip2: the ${chain.caip2} endpoint failed to answer ${what}: ${detail}`,
    { field: 'parameters.caip2', cause },
  );
}

/** True if viem's error chain holds a transport failure rather than a node's answer. */
function isTransportFailure(e: unknown): boolean {
  return (
    e instanceof BaseError &&
    e.walk((x) => x instanceof BaseError && (x.name === 'HttpRequestError' || x.name === 'TimeoutError')) !==
      null
  );
}

/**
 * eth_estimateGas of one call from `from`; a node's refusal means the call would fail, reported on
 * `field` (the gas limit the caller can give to send it anyway).
 */
export async function estimateCallGas(
  chain: EthChain,
  call: {
    readonly from: `0x${string}`;
    readonly to: Uint8Array;
    readonly value: bigint;
    readonly data: Uint8Array;
  },
  field: string,
): Promise<bigint> {
  try {
    const hex = await chain.client.request({
      method: 'eth_estimateGas',
      params: [
        { from: call.from, to: bytesTo0x(call.to), value: toHex(call.value), data: bytesTo0x(call.data) },
      ],
    });
    return BigInt(hex);
  } catch (e) {
    if (isTransportFailure(e)) throw upstream(chain, 'eth_estimateGas', e);
    const detail = e instanceof BaseError ? e.details || e.shortMessage : String(e);
    throw new CountersignError(
      'FIELD_INVALID',
      `${field}: gas estimation failed, the transaction would fail (${detail}); give parameters.gasLimit to send it anyway`,
      { field, cause: e },
    );
  }
}

/** EIP-1559 fees: the caller's where given, else the node's tip and twice the next base fee. */
export async function suggestFees(
  chain: EthChain,
  given: { readonly maxFeePerGas: bigint | undefined; readonly maxPriorityFeePerGas: bigint | undefined },
): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> {
  const { client } = chain;
  let priority = given.maxPriorityFeePerGas;
  if (priority === undefined) {
    try {
      priority = BigInt(await client.request({ method: 'eth_maxPriorityFeePerGas' }));
    } catch (e) {
      throw upstream(chain, 'eth_maxPriorityFeePerGas', e);
    }
  }
  if (given.maxFeePerGas !== undefined)
    return {
      maxFeePerGas: given.maxFeePerGas,
      // A caller's fee cap bounds the estimated tip (EIP-1559 requires tip <= cap).
      maxPriorityFeePerGas:
        given.maxPriorityFeePerGas ?? (priority < given.maxFeePerGas ? priority : given.maxFeePerGas),
    };
  let nextBaseFee: bigint;
  try {
    const history = await client.getFeeHistory({ blockCount: 1, rewardPercentiles: [] });
    // The last entry is the base fee of the block after the newest one: the next block's.
    nextBaseFee = history.baseFeePerGas[history.baseFeePerGas.length - 1] ?? 0n;
  } catch (e) {
    throw upstream(chain, 'eth_feeHistory', e);
  }
  // Twice the base fee stays valid through six full blocks of 12.5 % rises (EIP-1559).
  return { maxFeePerGas: nextBaseFee * 2n + priority, maxPriorityFeePerGas: priority };
}

/** The chain's pending transaction count of `address`: the next nonce as the node sees it. */
export async function pendingNonce(chain: EthChain, address: `0x${string}`): Promise<bigint> {
  try {
    return BigInt(
      await chain.client.request({ method: 'eth_getTransactionCount', params: [address, 'pending'] }),
    );
  } catch (e) {
    throw upstream(chain, 'eth_getTransactionCount', e);
  }
}

/** `gas` plus the margin a state change between estimate and inclusion may need, rounded up. */
export function withGasMargin(gas: bigint): bigint {
  return (gas * GAS_MARGIN_NUM + GAS_MARGIN_DEN - 1n) / GAS_MARGIN_DEN;
}

/** Fills the request into an EIP-1559 transaction; `nextStored` is the allocator's counter. */
export async function fillTransaction(
  req: SendRequest,
  nextStored: bigint | undefined,
): Promise<FilledTransaction> {
  const [chainPending, gasLimit, fee] = await Promise.all([
    req.nonce === undefined ? pendingNonce(req.chain, req.from) : Promise.resolve(0n),
    req.gasLimit === undefined
      ? estimateCallGas(req.chain, req, 'parameters.gasLimit').then(withGasMargin)
      : Promise.resolve(req.gasLimit),
    suggestFees(req.chain, req),
  ]);
  const stored = nextStored ?? 0n;
  const nonce = req.nonce ?? (chainPending > stored ? chainPending : stored);
  return {
    chainPending,
    tx: {
      type: 'eip1559',
      chainId: req.chain.chainId,
      nonce,
      gasLimit,
      maxFeePerGas: fee.maxFeePerGas,
      maxPriorityFeePerGas: fee.maxPriorityFeePerGas,
      to: req.to,
      value: req.value,
      data: req.data,
      accessList: [],
    },
  };
}
