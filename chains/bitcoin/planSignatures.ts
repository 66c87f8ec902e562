import { CountersignError } from '../../src/shared/errors.js';
import { recoveryIdOf } from '../../src/shared/secp256k1.js';
import { equalBytes } from '../../src/shared/encoding.js';
import type { RawSignature } from '../types.js';
import { decodeDer } from './der.js';
import type { Psbt, PsbtInput, SigningPlan } from './types.js';

function absent(index: number, what: string): CountersignError {
  return new CountersignError(
    'SIGNATURE_VERIFICATION_FAILED',
    `Bitcoin signature verification failed: input ${index} carries no ${what} of the signer`,
  );
}

function ecdsaOf(
  input: PsbtInput,
  index: number,
  digest: Uint8Array,
  plan: SigningPlan,
  known: 0 | 1 | undefined,
): RawSignature {
  const sig = input.partialSigs.find((p) => equalBytes(p.pubkey, plan.publicKey));
  if (sig === undefined) throw absent(index, 'partial_sig');
  const compact = decodeDer(sig.signature.subarray(0, sig.signature.length - 1));
  if (compact === undefined) throw absent(index, 'strict-DER partial_sig');
  // The y-parity is not in a DER signature; it is the recovery id that gives back the signer's key
  // (verifySignedPsbt found it when it verified the signature).
  const v = known ?? recoveryIdOf(digest, compact, plan.publicKey);
  if (v === undefined) throw absent(index, 'ECDSA signature');
  return { r: compact.slice(0, 32), s: compact.slice(32), v };
}

/**
 * The signatures a signed PSBT carries for each planned input, in plan order: ECDSA r, s (from the
 * DER partial_sig of the plan's key) with the recovery id, BIP-340 R.x, s (tap_key_sig) with v = 0.
 * Read it after verifySignedPsbt, with the recovery ids it found (else they are recovered here); an
 * absent or unreadable signature is a verification failure.
 */
export function planSignatures(
  psbt: Psbt,
  plan: SigningPlan,
  recoveryIds?: ReadonlyMap<number, 0 | 1>,
): RawSignature[] {
  return plan.inputs.map((p) => {
    const input = psbt.inputs[p.inputIndex];
    if (input === undefined) throw absent(p.inputIndex, 'map');
    if (p.scheme === 'ECDSA_SECP256K1')
      return ecdsaOf(input, p.inputIndex, p.digest, plan, recoveryIds?.get(p.inputIndex));
    const sig = input.tapKeySig;
    if (sig === undefined) throw absent(p.inputIndex, 'tap_key_sig');
    return { r: sig.slice(0, 32), s: sig.slice(32, 64), v: 0 };
  });
}
