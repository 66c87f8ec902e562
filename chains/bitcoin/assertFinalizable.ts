import { applySignatures } from './applySignatures.js';
import { finalizeAndExtract } from './finalizeAndExtract.js';
import type { Psbt, SigningPlan } from './types.js';

/** A well-formed stand-in (r = s = 1) so finalization can be tried before anything is signed. */
const ONE = new Uint8Array(32).fill(1, 31);
const PLACEHOLDER = { r: ONE, s: ONE, v: 0 };

/**
 * Throws BITCOIN_CANNOT_FINALIZE (naming the input) when the PSBT could not be finalized even once
 * every input of `plan` is signed, i.e. some input of another key is still unsigned or of a type the
 * finalizer does not handle. Lets a caller that wants the network transaction refuse before it signs.
 */
export function assertFinalizable(psbt: Psbt, plan: SigningPlan): void {
  finalizeAndExtract(
    applySignatures(
      psbt,
      plan,
      plan.inputs.map(() => PLACEHOLDER),
    ),
  );
}
