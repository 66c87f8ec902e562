import { keccak_256 } from '../../src/shared/keccak.js';
import { equalBytes } from '../../src/shared/encoding.js';
import { CountersignError, isCountersignError } from '../../src/shared/errors.js';
import { isLowS } from '../../src/shared/secp256k1.js';
import { parseSignedTransaction } from './parseSignedTransaction.js';
import { recoverAddress } from './recoverAddress.js';
import { signingDigest } from './signingDigest.js';

const ADDRESS_RE = /^(0x)?[0-9a-fA-F]{40}$/;

function failed(reason: string, cause?: unknown): CountersignError {
  return new CountersignError(
    'SIGNATURE_VERIFICATION_FAILED',
    `Ethereum signature verification failed: ${reason}`,
    {
      cause,
    },
  );
}

/**
 * Checks a signed transaction before it is released: its unsigned re-serialization equals
 * `unsigned` byte for byte, s is low (EIP-2), and the signature recovers (native libsecp256k1) to
 * `expectedSigner` (case-insensitive). Returns keccak256(signed), the EIP-55 signer and the
 * signature it checked (r and s 32 bytes each), so no caller parses the signed bytes again.
 */
export function verifySignedTransaction(
  signed: Uint8Array,
  unsigned: Uint8Array,
  expectedSigner: string,
): { hash: Uint8Array; signer: string; signature: { r: Uint8Array; s: Uint8Array; yParity: number } } {
  if (!ADDRESS_RE.test(expectedSigner)) throw failed('the expected signer is not a 20-byte hex address');
  let parsed;
  try {
    parsed = parseSignedTransaction(signed);
  } catch (e) {
    if (!isCountersignError(e)) throw e;
    throw failed(`the signed transaction does not parse (${e.message})`, e);
  }
  if (!equalBytes(parsed.unsigned, unsigned)) {
    throw failed('the signed transaction body differs from the unsigned transaction that was sent');
  }
  const compact = new Uint8Array(64);
  compact.set(parsed.r, 0);
  compact.set(parsed.s, 32);
  if (!isLowS(compact)) throw failed('s is zero or not in the lower half of the curve order (EIP-2)');
  const signer = recoverAddress(signingDigest(unsigned), parsed.r, parsed.s, parsed.yParity);
  if (signer === undefined) throw failed('the signature does not recover a public key');
  const expected = expectedSigner.length === 42 ? expectedSigner.slice(2) : expectedSigner;
  if (signer.slice(2).toLowerCase() !== expected.toLowerCase()) {
    throw failed(`the signature recovers ${signer}, not the expected signer ${expectedSigner}`);
  }
  return {
    hash: keccak_256(signed),
    signer,
    signature: { r: parsed.r, s: parsed.s, yParity: parsed.yParity },
  };
}
