import { keccak_256 } from '../../src/shared/keccak.js';
import { serializeUnsignedTransaction } from './serializeUnsignedTransaction.js';
import type { TempoTransaction } from './types.js';

/** What the sender signs: keccak256 of the unsigned 0x76 serialization (ox `TxEnvelopeTempo.getSignPayload`). */
export function senderDigest(tx: TempoTransaction): Uint8Array {
  return keccak_256(serializeUnsignedTransaction(tx));
}
