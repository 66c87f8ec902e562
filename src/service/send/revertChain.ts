/**
 * The `eth.revertChain` of a failed send (turnkey-api.md 6.4): from the outermost frame that reverted
 * to the innermost, each with its address, whether the error is Solidity's own (`native`:
 * `Error(string)`, `Panic(uint256)`), a contract's (`custom`) or carried no data (`unknown`), and
 * its text. A batch names the executor frame (the account) first, then the call that failed.
 */
import { decodeAbiParameters, decodeFunctionData, type Hex } from 'viem';
import { bytesTo0x } from '../../shared/encoding.js';
import { BATCH_EXECUTOR_ABI, decodeExecutorRevert } from './batchExecutor.js';

export const REVERT_ERROR_TYPES = ['unknown', 'native', 'custom'] as const;
export type RevertErrorType = (typeof REVERT_ERROR_TYPES)[number];

export interface RevertEntry {
  readonly address: string;
  readonly errorType: RevertErrorType;
  readonly displayMessage: string;
}

const ERROR_SELECTOR = '08c379a0'; // Error(string)
const PANIC_SELECTOR = '4e487b71'; // Panic(uint256)

function errorTypeOf(data: Hex | undefined): RevertErrorType {
  if (data === undefined || data.length < 10) return 'unknown';
  const selector = data.slice(2, 10).toLowerCase();
  return selector === ERROR_SELECTOR || selector === PANIC_SELECTOR ? 'native' : 'custom';
}

/** The revert chain of a send whose replay reverted with `revert` (undefined: no data). */
export function revertChainOf(input: {
  /** True for a batch through the executor at `account`. */
  readonly batch: boolean;
  readonly account: string;
  /** The transaction's `to` and calldata. */
  readonly to: Uint8Array | null;
  readonly data: Uint8Array;
  readonly revert: Hex | undefined;
  /** How a plain revert reads (the tracker's own decoding). */
  readonly describe: (data: Hex | undefined) => string;
}): RevertEntry[] {
  const { revert, describe } = input;
  if (!input.batch)
    return [
      {
        address: input.to === null ? '' : bytesTo0x(input.to),
        errorType: errorTypeOf(revert),
        displayMessage: describe(revert),
      },
    ];
  const executorText = revert === undefined ? undefined : decodeExecutorRevert(revert);
  const outer: RevertEntry = {
    address: input.account,
    errorType: executorText === undefined ? errorTypeOf(revert) : 'custom',
    displayMessage: executorText ?? describe(revert),
  };
  const inner = revert === undefined ? undefined : callFailure(revert, input.data);
  if (inner === undefined) return [outer];
  return [
    outer,
    { address: inner.to, errorType: errorTypeOf(inner.reason), displayMessage: describe(inner.reason) },
  ];
}

/** The failing call of a `CallFailed(index, reason)` revert, with its target from the batch calldata. */
function callFailure(revert: Hex, calldata: Uint8Array): { to: string; reason: Hex } | undefined {
  try {
    const { args } = decodeFunctionData({ abi: BATCH_EXECUTOR_ABI, data: bytesTo0x(calldata) as Hex });
    const calls = args?.[0] as readonly { to: string }[] | undefined;
    const [index, reason] = decodeAbiParameters(
      [{ type: 'uint256' }, { type: 'bytes' }],
      `0x${revert.slice(10)}`,
    );
    const to = calls?.[Number(index)]?.to;
    if (to === undefined || !decodeExecutorRevert(revert)?.startsWith(`call ${index} `)) return undefined;
    return { to: to.toLowerCase(), reason };
  } catch {
    return undefined;
  }
}
