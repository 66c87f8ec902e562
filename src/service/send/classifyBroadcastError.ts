/** What a node's refusal of eth_sendRawTransaction means for a send. */

export const BROADCAST_ERROR_KINDS = [
  /** The nonce was used on chain: by this very transaction (look for its receipt) or by another. */
  'NONCE_TOO_LOW',
  /** The node already holds these bytes: the broadcast happened. */
  'ALREADY_KNOWN',
  /** Another transaction with this nonce sits in the pool with a higher fee. */
  'REPLACEMENT_UNDERPRICED',
  /** The account cannot pay value + gas × max fee. */
  'INSUFFICIENT_FUNDS',
  /** The node will never take these bytes (gas above the block limit, below intrinsic, fee over its cap…). */
  'REJECTED',
  /** Anything else (endpoint down, timeout): try again later with the same bytes. */
  'RETRY',
] as const;
export type BroadcastErrorKind = (typeof BROADCAST_ERROR_KINDS)[number];

/** Refusals that no retry of the same bytes can change (the base fee, a pool limit or a gap can). */
const PERMANENT = [
  'intrinsic gas too low',
  'exceeds block gas limit',
  'gas limit reached',
  'gas limit too high',
  'intrinsic gas too high',
  'invalid sender',
  'exceeds the configured cap',
  'transaction type not supported',
  'invalid chain id',
  'incorrect chain id',
  'oversized data',
  'max priority fee per gas higher than max fee per gas',
  'tip higher than fee cap',
];

/**
 * Classifies by the message texts geth, reth, erigon, nethermind and anvil answer with (they share
 * no error code for these cases).
 */
export function classifyBroadcastError(message: string): BroadcastErrorKind {
  const m = message.toLowerCase();
  if (m.includes('nonce too low') || m.includes('nonce is too low') || m.includes('oldnonce'))
    return 'NONCE_TOO_LOW';
  if (
    m.includes('already known') ||
    m.includes('alreadyknown') ||
    m.includes('already imported') ||
    m.includes('transaction already exists')
  )
    return 'ALREADY_KNOWN';
  if (m.includes('replacement transaction underpriced') || m.includes('replacement underpriced'))
    return 'REPLACEMENT_UNDERPRICED';
  if (m.includes('insufficient funds')) return 'INSUFFICIENT_FUNDS';
  if (PERMANENT.some((p) => m.includes(p))) return 'REJECTED';
  return 'RETRY';
}
