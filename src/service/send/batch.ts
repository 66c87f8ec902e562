/**
 * Batches through the gas station (eth_send_transaction with `sponsor`, or with more than one call):
 * the account's calls run inside the batch executor it delegates to (EIP-7702), authorized by an
 * EIP-712 `BatchExecution` signature over the calls, the gas-station nonce and a deadline. The
 * transaction that carries them goes to the account's own address and is signed by the sponsor
 * (sponsored: the sponsor pays) or by the account (an unsponsored batch). It is type 4 with the
 * account's authorization while the account does not delegate to the executor yet, type 2 after.
 */
import { hashAuthorization, recoverAddress } from '../../../chains/ethereum/index.js';
import type { EthAuthorization, EthTransaction } from '../../../chains/ethereum/types.js';
import { bytesToHex, hexToBytes } from '../../shared/encoding.js';
import { CountersignError } from '../../shared/errors.js';
import { signEcdsaSecp256k1 } from '../keys/index.js';
import { batchExecutionDigest, encodeExecuteCalldata, type BatchCall } from './batchExecutor.js';
import { withGasMargin } from './fillTransaction.js';

/** Intrinsic gas of a call (not a creation): 21000 + 4 per zero and 16 per non-zero data byte (EIP-2028). */
export function intrinsicGas(data: Uint8Array): bigint {
  let gas = 21_000n;
  for (const b of data) gas += b === 0 ? 4n : 16n;
  return gas;
}

/** EIP-7702 PER_EMPTY_ACCOUNT_COST, charged per authorization in the list. */
export const AUTHORIZATION_GAS = 25_000n;

// What the executor adds to the calls it runs, with room to spare (unused gas is refunded to the
// payer): signature recovery (3,000), the nonce's cold SSTORE (22,100), EIP-712 hashing, the event.
const EXECUTOR_BASE_GAS = 60_000n;
// Per call: cold account access (2,600), CALL, ABI decoding and copying of its calldata.
const EXECUTOR_PER_CALL_GAS = 15_000n;
// A CALL that moves value: 9,000, plus 25,000 when it creates the callee's account.
const VALUE_CALL_GAS = 34_000n;

/** The 65-byte placeholder the gas floor is computed with (a signature's size, all non-zero bytes). */
const SIGNATURE_PLACEHOLDER = new Uint8Array(65).fill(0xff);

/** The least gas a batch transaction can carry: intrinsic gas of its calldata and authorizations. */
export function batchGasFloor(input: {
  readonly calls: readonly BatchCall[];
  readonly nonce: bigint;
  readonly deadline: bigint;
  readonly delegating: boolean;
}): bigint {
  const data = encodeExecuteCalldata({ ...input, signature: SIGNATURE_PLACEHOLDER });
  return intrinsicGas(data) + (input.delegating ? AUTHORIZATION_GAS : 0n);
}

/**
 * The gas limit of a batch: its floor, the executor's own work and what each call used when estimated
 * on its own from the account (minus the 21,000 base every estimate includes), plus the usual margin.
 */
export function batchGasLimit(input: {
  readonly calls: readonly BatchCall[];
  readonly callEstimates: readonly bigint[];
  readonly nonce: bigint;
  readonly deadline: bigint;
  readonly delegating: boolean;
}): bigint {
  let gas = batchGasFloor(input) + EXECUTOR_BASE_GAS;
  input.calls.forEach((call, i) => {
    const estimate = input.callEstimates[i] ?? 21_000n;
    gas += (estimate > 21_000n ? estimate - 21_000n : 0n) + EXECUTOR_PER_CALL_GAS;
    if (call.value > 0n) gas += VALUE_CALL_GAS;
  });
  return withGasMargin(gas);
}

function recovered(digest: Uint8Array, sig: { r: Uint8Array; s: Uint8Array; v: number }): string | undefined {
  return recoverAddress(digest, sig.r, sig.s, sig.v)?.toLowerCase();
}

/** The account's EIP-712 batch signature (r‖s‖v, v = 27/28), checked to recover to the account. */
export function signBatch(input: {
  readonly privateKey: Uint8Array;
  readonly account: `0x${string}`;
  readonly chainId: bigint;
  readonly calls: readonly BatchCall[];
  readonly nonce: bigint;
  readonly deadline: bigint;
}): Uint8Array {
  const digest = batchExecutionDigest({
    chainId: input.chainId,
    account: hexToBytes(input.account, 'parameters.from'),
    calls: input.calls,
    nonce: input.nonce,
    deadline: input.deadline,
  });
  const sig = signEcdsaSecp256k1(input.privateKey, digest);
  if (recovered(digest, sig) !== input.account)
    throw new CountersignError(
      'SIGNATURE_VERIFICATION_FAILED',
      'the batch signature does not recover to the account',
    );
  const out = new Uint8Array(65);
  out.set(sig.r, 0);
  out.set(sig.s, 32);
  out[64] = 27 + sig.v;
  return out;
}

/** The account's EIP-7702 authorization to delegate to `executor`, checked to recover to the account. */
export function signAuthorization(input: {
  readonly privateKey: Uint8Array;
  readonly account: `0x${string}`;
  readonly chainId: bigint;
  readonly executor: `0x${string}`;
  readonly nonce: bigint;
}): EthAuthorization {
  const address = hexToBytes(input.executor, 'executor');
  const digest = hashAuthorization({ chainId: input.chainId, address, nonce: input.nonce });
  const sig = signEcdsaSecp256k1(input.privateKey, digest);
  if (recovered(digest, sig) !== input.account)
    throw new CountersignError(
      'SIGNATURE_VERIFICATION_FAILED',
      'the EIP-7702 authorization does not recover to the account',
    );
  return {
    chainId: input.chainId,
    address,
    nonce: input.nonce,
    yParity: sig.v,
    r: BigInt(`0x${bytesToHex(sig.r)}`),
    s: BigInt(`0x${bytesToHex(sig.s)}`),
  };
}

/** The transaction that runs a signed batch: to the account itself, type 4 while it still delegates. */
export function batchTransaction(input: {
  readonly chainId: bigint;
  readonly nonce: bigint;
  readonly account: `0x${string}`;
  readonly gasLimit: bigint;
  readonly maxFeePerGas: bigint;
  readonly maxPriorityFeePerGas: bigint;
  readonly calls: readonly BatchCall[];
  readonly gasStationNonce: bigint;
  readonly deadline: bigint;
  readonly signature: Uint8Array;
  readonly authorization: EthAuthorization | undefined;
}): EthTransaction {
  const data = encodeExecuteCalldata({
    calls: input.calls,
    nonce: input.gasStationNonce,
    deadline: input.deadline,
    signature: input.signature,
  });
  return {
    type: input.authorization === undefined ? 'eip1559' : 'eip7702',
    chainId: input.chainId,
    nonce: input.nonce,
    gasLimit: input.gasLimit,
    maxFeePerGas: input.maxFeePerGas,
    maxPriorityFeePerGas: input.maxPriorityFeePerGas,
    to: hexToBytes(input.account, 'parameters.from'),
    value: 0n,
    data,
    accessList: [],
    ...(input.authorization === undefined ? {} : { authorizationList: [input.authorization] }),
  };
}
