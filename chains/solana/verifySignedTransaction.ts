import { base58 } from '@scure/base';
import { equalBytes } from '../../src/shared/encoding.js';
import { CountersignError, isCountersignError } from '../../src/shared/errors.js';
import { verifyEd25519 } from './ed25519.js';
import { parseWireTransaction } from './parseWireTransaction.js';
import { encodePublicKey } from './publicKey.js';
import { PUBLIC_KEY_LENGTH, type SolanaTransaction } from './types.js';

function failed(reason: string, cause?: unknown): CountersignError {
  return new CountersignError(
    'SIGNATURE_VERIFICATION_FAILED',
    `Solana signature verification failed: ${reason}`,
    {
      cause,
    },
  );
}

function parse(bytes: Uint8Array, which: string): SolanaTransaction {
  try {
    return parseWireTransaction(bytes);
  } catch (e) {
    if (!isCountersignError(e)) throw e;
    throw failed(`the ${which} transaction does not parse (${e.message})`, e);
  }
}

/** What verification established about a signed (possibly still partly signed) transaction. */
export interface SolanaVerifiedTransaction {
  /**
   * Signature slot 0: the transaction id once the fee payer has signed. When the expected signer is
   * not the fee payer this is someone else's slot and may still be 64 zero bytes (`complete` false).
   */
  readonly hash: Uint8Array;
  /** The expected signer, base58. */
  readonly signer: string;
  /** The slot the expected signer filled. */
  readonly signerIndex: number;
  /** The expected signer's verified 64-byte signature (R‖S) from that slot. */
  readonly signature: Uint8Array;
  /** base58 keys of required signers whose slots are still zero. */
  readonly missingSigners: readonly string[];
  /** Every slot is non-zero (the transaction can be broadcast). */
  readonly complete: boolean;
}

/**
 * Checks a signed transaction before it is released: its message bytes equal the unsigned
 * transaction's, every slot but the expected signer's is unchanged, and the expected signer's slot
 * holds an ed25519 signature over the message by that key (node:crypto / OpenSSL).
 */
export function verifySignedTransaction(
  signed: Uint8Array,
  unsigned: Uint8Array,
  expectedSigner: string,
): SolanaVerifiedTransaction {
  let signerKey: Uint8Array;
  try {
    signerKey = base58.decode(expectedSigner);
  } catch (e) {
    throw failed('the expected signer is not base58', e);
  }
  if (signerKey.length !== PUBLIC_KEY_LENGTH) throw failed('the expected signer is not a 32-byte public key');
  const s = parse(signed, 'signed');
  const u = parse(unsigned, 'unsigned');
  if (!equalBytes(s.messageBytes, u.messageBytes)) {
    throw failed('the signed message differs from the unsigned transaction that was sent');
  }
  const required = s.message.header.numRequiredSignatures;
  let slot = -1;
  for (let i = 0; i < required; i++) {
    const key = s.message.staticAccountKeys[i];
    if (key !== undefined && equalBytes(key, signerKey)) slot = i;
  }
  if (slot < 0) throw failed(`${expectedSigner} is not a required signer of this transaction`);
  const missingSigners: string[] = [];
  for (let i = 0; i < required; i++) {
    const sig = s.signatures[i] as Uint8Array;
    if (i !== slot && !equalBytes(sig, u.signatures[i] as Uint8Array)) {
      throw failed(`signature slot ${i}, another signer's, differs from the unsigned transaction`);
    }
    if (sig.every((b) => b === 0))
      missingSigners.push(encodePublicKey(s.message.staticAccountKeys[i] as Uint8Array));
  }
  if (!verifyEd25519(s.signatures[slot] as Uint8Array, s.messageBytes, signerKey)) {
    throw failed(`the signature in slot ${slot} does not verify for ${expectedSigner}`);
  }
  return {
    hash: (s.signatures[0] as Uint8Array).slice(),
    signer: encodePublicKey(signerKey),
    signerIndex: slot,
    signature: (s.signatures[slot] as Uint8Array).slice(),
    missingSigners,
    complete: missingSigners.length === 0,
  };
}
