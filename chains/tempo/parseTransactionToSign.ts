import { keccak_256 } from '../../src/shared/keccak.js';
import { recoverAddress } from '../ethereum/index.js';
import { decodeEnvelope, malformed } from './envelope.js';
import { serializeUnsignedTransaction } from './serializeUnsignedTransaction.js';
import type { TempoSignature, TempoTransaction } from './types.js';

/** What a signer is handed: the sender's unsigned transaction, or a sponsored one the sender has signed. */
export type TempoTransactionToSign =
  | {
      /** The unsigned serialization: the key signs as the sender. */
      readonly kind: 'sender';
      readonly tx: TempoTransaction;
      /** The sender preimage (equal to the input bytes). */
      readonly unsigned: Uint8Array;
    }
  | {
      /** The sender-signed hand-off of a sponsored transaction: the key signs as the fee payer. */
      readonly kind: 'feePayer';
      readonly tx: TempoTransaction;
      /** The sender preimage the sender's signature commits to. */
      readonly unsigned: Uint8Array;
      readonly senderSignature: TempoSignature;
      /** EIP-55 address the sender's signature recovers to. */
      readonly sender: string;
    };

/**
 * Strictly parses what `sign_transaction` takes for Tempo: the unsigned 0x76 serialization (13
 * fields), or the sender-signed hand-off of a sponsored transaction (14 fields, the 0x00 fee payer
 * marker, no fee token, a secp256k1 sender signature; what `assemble(tx, senderSig)` produces),
 * which a fee payer completes. A signed transaction that is not sponsored, or whose fee payer has
 * already signed, is refused: there is nothing left to sign. The hand-off carries no fee token, so
 * a fee payer completing it cannot choose one here (the protocol's default applies).
 */
export function parseTransactionToSign(bytes: Uint8Array): TempoTransactionToSign {
  const { tx, senderSignature, feePayerSignature } = decodeEnvelope(bytes, 'either');
  const unsigned = serializeUnsignedTransaction(tx);
  if (senderSignature === undefined) return { kind: 'sender', tx, unsigned };
  if (!tx.sponsored) {
    throw malformed(
      'signature',
      'the transaction already carries a signature and has no fee payer to sign; send the unsigned serialization',
    );
  }
  if (feePayerSignature !== undefined) {
    throw malformed('fee_payer_signature', 'the fee payer has already signed; there is nothing left to sign');
  }
  const sender = recoverAddress(
    keccak_256(unsigned),
    senderSignature.r,
    senderSignature.s,
    senderSignature.yParity,
  );
  if (sender === undefined) {
    throw malformed('signature', 'the sender signature is invalid or high-S; it recovers no account');
  }
  return { kind: 'feePayer', tx, unsigned, senderSignature, sender };
}
