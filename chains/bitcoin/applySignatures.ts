import { bigintToFixed, bytesToBigint, concatBytes } from '../../src/shared/encoding.js';
import { CountersignError } from '../../src/shared/errors.js';
import { SECP256K1_N } from '../../src/shared/secp256k1.js';
import type { RawSignature } from '../types.js';
import { encodeDer } from './der.js';
import { decodeInput, IN } from './psbtMaps.js';
import { SIGHASH_DEFAULT, type Psbt, type PsbtEntry, type PsbtInput, type SigningPlan } from './types.js';

/** ECDSA partial_sig value: DER with s in the lower half (BIP-146 LOW_S) and the sighash type byte. */
function ecdsaValue(sig: RawSignature, sighashType: number): Uint8Array {
  let s = bytesToBigint(sig.s);
  if (s > SECP256K1_N >> 1n) s = SECP256K1_N - s;
  const compact = concatBytes(sig.r, bigintToFixed(s, 32));
  return concatBytes(encodeDer(compact), Uint8Array.of(sighashType));
}

/**
 * Writes one signature per planned input (in plan order) into a copy of `psbt`: ECDSA as partial_sig
 * {pubkey → DER ‖ type}, BIP-340 as tap_key_sig (64 bytes for DEFAULT, 65 with the type byte otherwise).
 * The result is signed but not finalized; every other pair is untouched. Check it with verifySignedPsbt.
 */
export function applySignatures(psbt: Psbt, plan: SigningPlan, signatures: readonly RawSignature[]): Psbt {
  if (signatures.length !== plan.inputs.length) {
    throw new CountersignError(
      'INTERNAL',
      `the signing plan has ${plan.inputs.length} input(s) but ${signatures.length} signature(s) came back`,
    );
  }
  const inputs: PsbtInput[] = [...psbt.inputs];
  plan.inputs.forEach((p, k) => {
    const sig = signatures[k] as RawSignature;
    const input = inputs[p.inputIndex];
    if (input === undefined)
      throw new CountersignError('INTERNAL', `the plan names missing input ${p.inputIndex}`);
    if (sig.r.length !== 32 || sig.s.length !== 32) {
      throw new CountersignError('INTERNAL', `signature ${k} must have 32-byte r and s`);
    }
    let entry: PsbtEntry;
    if (p.scheme === 'ECDSA_SECP256K1') {
      entry = {
        key: concatBytes(Uint8Array.of(IN.PARTIAL_SIG), plan.publicKey),
        value: ecdsaValue(sig, p.sighashType),
      };
    } else {
      const raw = concatBytes(sig.r, sig.s);
      entry = {
        key: Uint8Array.of(IN.TAP_KEY_SIG),
        value: p.sighashType === SIGHASH_DEFAULT ? raw : concatBytes(raw, Uint8Array.of(p.sighashType)),
      };
    }
    inputs[p.inputIndex] = decodeInput([...input.entries, entry], p.inputIndex, psbt.global.unsignedTx);
  });
  return { global: psbt.global, inputs, outputs: psbt.outputs };
}
