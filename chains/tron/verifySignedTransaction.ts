import { concatBytes, equalBytes, hexToBytes } from '../../src/shared/encoding.js';
import { CountersignError, isCountersignError } from '../../src/shared/errors.js';
import { isLowS } from '../../src/shared/secp256k1.js';
import { recoverAddress } from '../ethereum/index.js';
import { encodeTronAddress } from './encodeTronAddress.js';
import { parseSignedTransaction } from './parseSignedTransaction.js';
import { parseTronAddress } from './parseTronAddress.js';
import { txId } from './txId.js';
import { TRON_ADDRESS_PREFIX } from './types.js';

function failed(reason: string, cause?: unknown): CountersignError {
  return new CountersignError(
    'SIGNATURE_VERIFICATION_FAILED',
    `Tron signature verification failed: ${reason}`,
    {
      cause,
    },
  );
}

/** v as tronweb writes it (27/28) or as a raw y-parity (0/1); anything else is refused. */
function yParityOf(v: number): number | undefined {
  if (v === 27 || v === 28) return v - 27;
  if (v === 0 || v === 1) return v;
  return undefined;
}

/**
 * Checks a signed transaction before it is released: its raw_data is byte-identical to
 * `unsignedRawData`, it carries exactly one signature, s is low, and ecrecover(txID) (native
 * libsecp256k1) gives `expectedSigner` (base58 `T…` or 41-hex), which must also be the
 * owner_address of every contract. Returns the txID and the signer in base58.
 */
export function verifySignedTransaction(
  signed: Uint8Array,
  unsignedRawData: Uint8Array,
  expectedSigner: string,
): { hash: Uint8Array; signer: string } {
  let expected: Uint8Array;
  try {
    expected = parseTronAddress(expectedSigner, 'expected_signer');
  } catch (e) {
    throw failed('the expected signer is not a Tron address', e);
  }
  let parsed;
  try {
    parsed = parseSignedTransaction(signed);
  } catch (e) {
    if (!isCountersignError(e)) throw e;
    throw failed(`the signed transaction does not parse (${e.message})`, e);
  }
  if (!equalBytes(parsed.rawData, unsignedRawData)) {
    throw failed('the signed raw_data differs from the unsigned raw_data that was sent');
  }
  const [sig, ...more] = parsed.signatures;
  if (sig === undefined || more.length > 0) {
    throw failed(`expected exactly one signature, got ${parsed.signatures.length}`);
  }
  const yParity = yParityOf(sig[64] as number);
  if (yParity === undefined) throw failed(`v = ${sig[64]} is neither 27/28 nor 0/1`);
  const compact = sig.subarray(0, 64);
  if (!isLowS(compact)) throw failed('s is zero or not in the lower half of the curve order');
  const hash = txId(parsed.rawData);
  const recovered = recoverAddress(hash, compact.subarray(0, 32), compact.subarray(32), yParity);
  if (recovered === undefined) throw failed('the signature does not recover a public key');
  const signerBytes = concatBytes(Uint8Array.of(TRON_ADDRESS_PREFIX), hexToBytes(recovered, 'signer'));
  const signer = encodeTronAddress(signerBytes);
  if (!equalBytes(signerBytes, expected)) {
    throw failed(`the signature recovers ${signer}, not the expected signer ${encodeTronAddress(expected)}`);
  }
  parsed.tx.contract.forEach((c, i) => {
    if (!equalBytes(c.parameter.ownerAddress, signerBytes)) {
      throw failed(
        `contract[${i}].owner_address is ${encodeTronAddress(c.parameter.ownerAddress)}, not the signer ${signer}`,
      );
    }
  });
  return { hash, signer };
}
