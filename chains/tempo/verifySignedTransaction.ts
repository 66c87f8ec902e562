import { keccak_256 } from '../../src/shared/keccak.js';
import { equalBytes } from '../../src/shared/encoding.js';
import { CountersignError, isCountersignError } from '../../src/shared/errors.js';
import { recoverAddress } from '../ethereum/index.js';
import { feePayerDigest } from './feePayerDigest.js';
import { parseSignedTransaction } from './parseSignedTransaction.js';
import type { ParsedSignedTempoTransaction, TempoSignature } from './types.js';

const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;

export interface VerifyTempoOptions {
  /** The account that must have signed as fee payer; the transaction must then be sponsored and carry its signature. */
  readonly expectedFeePayer?: string;
}

export interface VerifiedTempoTransaction {
  /** keccak256 of the signed envelope (the Tempo transaction hash). */
  readonly hash: Uint8Array;
  /** EIP-55 sender. */
  readonly signer: string;
  /** EIP-55 fee payer, when the fee payer has signed. */
  readonly feePayer?: string;
}

function failed(reason: string, cause?: unknown): CountersignError {
  return new CountersignError(
    'SIGNATURE_VERIFICATION_FAILED',
    `Tempo signature verification failed: ${reason}`,
    {
      cause,
    },
  );
}

function recover(digest: Uint8Array, sig: TempoSignature): string | undefined {
  // recoverAddress (native libsecp256k1) refuses high-S signatures as well as invalid ones.
  return recoverAddress(digest, sig.r, sig.s, sig.yParity);
}

/**
 * Checks a signed transaction before it is released: its sender preimage equals `unsigned` byte for
 * byte, the sender signature recovers to `expectedSigner`, and a fee payer signature, when present
 * or expected, recovers over the 0x78 fee payer digest (to `expectedFeePayer` when given). Addresses
 * compare case-insensitively. Returns keccak256(signed), the signer and the fee payer.
 */
export function verifySignedTransaction(
  signed: Uint8Array,
  unsigned: Uint8Array,
  expectedSigner: string,
  opts: VerifyTempoOptions = {},
): VerifiedTempoTransaction {
  if (!ADDRESS_RE.test(expectedSigner))
    throw failed('the expected signer is not a 0x-prefixed 20-byte hex address');
  const { expectedFeePayer } = opts;
  if (expectedFeePayer !== undefined && !ADDRESS_RE.test(expectedFeePayer)) {
    throw failed('the expected fee payer is not a 0x-prefixed 20-byte hex address');
  }
  let parsed: ParsedSignedTempoTransaction;
  try {
    parsed = parseSignedTransaction(signed);
  } catch (e) {
    if (!isCountersignError(e)) throw e;
    throw failed(`the signed transaction does not parse (${e.message})`, e);
  }
  if (!equalBytes(parsed.unsigned, unsigned)) {
    throw failed('the signed transaction body differs from the unsigned transaction that was sent');
  }
  const signer = recover(keccak_256(unsigned), parsed.senderSignature);
  if (signer === undefined) throw failed('the sender signature is invalid or high-S');
  if (signer.toLowerCase() !== expectedSigner.toLowerCase()) {
    throw failed(`the sender signature recovers ${signer}, not the expected signer ${expectedSigner}`);
  }
  const { tx, feePayerSignature } = parsed;
  if (expectedFeePayer !== undefined && !tx.sponsored) {
    throw failed('a fee payer was expected but the transaction is not sponsored');
  }
  if (feePayerSignature === undefined) {
    if (expectedFeePayer !== undefined) throw failed('a fee payer was expected but it has not signed');
    return { hash: keccak_256(signed), signer };
  }
  const feePayer = recover(feePayerDigest(tx, signer), feePayerSignature);
  if (feePayer === undefined) throw failed('the fee payer signature is invalid or high-S');
  if (expectedFeePayer !== undefined && feePayer.toLowerCase() !== expectedFeePayer.toLowerCase()) {
    throw failed(
      `the fee payer signature recovers ${feePayer}, not the expected fee payer ${expectedFeePayer}`,
    );
  }
  return { hash: keccak_256(signed), signer, feePayer };
}
