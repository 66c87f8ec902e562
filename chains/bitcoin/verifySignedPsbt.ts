import { schnorr } from '@noble/curves/secp256k1.js';
import { bytesToHex, concatBytes, equalBytes } from '../../src/shared/encoding.js';
import { CountersignError, isCountersignError } from '../../src/shared/errors.js';
import { isLowS, recoveryIdOf } from '../../src/shared/secp256k1.js';
import { addressFromScript } from './addressFromScript.js';
import { decodeDer } from './der.js';
import { parsePsbt } from './parsePsbt.js';
import { IN } from './psbtMaps.js';
import { hash160, p2pkhScript, p2trScript, p2wpkhScript } from './script.js';
import { signingPlan } from './signingPlan.js';
import { txid } from './txid.js';
import type { BitcoinNetwork, PlannedInput, Psbt, PsbtEntry, SigningPlan } from './types.js';

function failed(reason: string, cause?: unknown): CountersignError {
  return new CountersignError(
    'SIGNATURE_VERIFICATION_FAILED',
    `Bitcoin signature verification failed: ${reason}`,
    {
      cause,
    },
  );
}

export function parseOrFail(bytes: Uint8Array, which: string): Psbt {
  try {
    return parsePsbt(bytes);
  } catch (e) {
    if (!isCountersignError(e)) throw e;
    throw failed(`the ${which} PSBT does not parse (${e.message})`, e);
  }
}

function sameEntries(a: readonly PsbtEntry[], b: readonly PsbtEntry[]): boolean {
  return (
    a.length === b.length &&
    a.every((e, i) => equalBytes(e.key, b[i]!.key) && equalBytes(e.value, b[i]!.value))
  );
}

function asMap(entries: readonly PsbtEntry[]): Map<string, Uint8Array> {
  return new Map(entries.map((e) => [bytesToHex(e.key), e.value]));
}

/** The one key a planned input may gain: partial_sig of the signer's pubkey, or tap_key_sig. */
function addedKey(p: PlannedInput, plan: SigningPlan): string {
  return bytesToHex(
    p.scheme === 'ECDSA_SECP256K1'
      ? concatBytes(Uint8Array.of(IN.PARTIAL_SIG), plan.publicKey)
      : Uint8Array.of(IN.TAP_KEY_SIG),
  );
}

/** Checks the signature an input gained; answers an ECDSA signature's recovery id (Schnorr: undefined). */
function checkSignature(p: PlannedInput, plan: SigningPlan, value: Uint8Array): 0 | 1 | undefined {
  const at = `input ${p.inputIndex}`;
  if (p.scheme === 'ECDSA_SECP256K1') {
    const type = value[value.length - 1];
    if (type !== p.sighashType) throw failed(`${at}: the signature's sighash type is not ${p.sighashType}`);
    const compact = decodeDer(value.subarray(0, value.length - 1));
    if (compact === undefined) throw failed(`${at}: the signature is not strict DER (BIP-66)`);
    if (!isLowS(compact)) throw failed(`${at}: s is not in the lower half of the curve order (BIP-146)`);
    // Verified by recovering the signer's key from it: the same check as a verification, and the
    // recovery id it yields is what the caller answers with (a DER signature does not carry it).
    const v = recoveryIdOf(p.digest, compact, plan.publicKey);
    if (v === undefined) {
      throw failed(
        `${at}: the ECDSA signature does not verify against the recomputed sighash and the signer's key`,
      );
    }
    return v;
  }
  const expectedLength = p.sighashType === 0 ? 64 : 65;
  if (value.length !== expectedLength || (expectedLength === 65 && value[64] !== p.sighashType)) {
    throw failed(`${at}: tap_key_sig does not carry sighash type ${p.sighashType}`);
  }
  let ok = false;
  try {
    ok = schnorr.verify(value.subarray(0, 64), p.digest, plan.taprootOutputKey);
  } catch {
    ok = false;
  }
  if (!ok) throw failed(`${at}: the Schnorr signature does not verify against the tweaked output key`);
  return undefined;
}

/**
 * Checks a signed PSBT before it is released: the global map (so the unsigned transaction) and every output
 * map are byte-identical to `unsigned`; each input kept all its pairs unchanged and gained only the one
 * signature its plan calls for (none for inputs of other keys); every added signature verifies against the
 * sighash recomputed from `unsigned` and the signer's key (the BIP-86 output key for P2TR). Returns the txid
 * in display order (reversed, as bitcoind prints it) and the signer's address of the first signed input's type.
 */
export function verifySignedPsbt(
  signed: Uint8Array,
  unsigned: Uint8Array,
  expectedSignerPubkey: Uint8Array,
  network: BitcoinNetwork = 'mainnet',
): VerifiedPsbt {
  const before = parseOrFail(unsigned, 'unsigned');
  return verifyParsedPsbt(parseOrFail(signed, 'signed'), before, expectedSignerPubkey, network);
}

/** What {@link verifySignedPsbt} checked: the txid, the signer's address, and the plan and PSBT it checked them on. */
export interface VerifiedPsbt {
  readonly hash: Uint8Array;
  readonly signer: string;
  /** The plan recomputed from the unsigned PSBT: which inputs, which digests. */
  readonly plan: SigningPlan;
  /** The signed PSBT, parsed (each input's signature is where the plan says). */
  readonly signed: Psbt;
  /** Input index → recovery id of its verified ECDSA signature. */
  readonly recoveryIds: ReadonlyMap<number, 0 | 1>;
}

/**
 * {@link verifySignedPsbt} over PSBTs already parsed, so that a caller that holds them parses nothing
 * twice. When the signing plan of `unsigned` is already known (`plan`), it is not recomputed.
 */
export function verifyParsedPsbt(
  after: Psbt,
  before: Psbt,
  expectedSignerPubkey: Uint8Array,
  network: BitcoinNetwork = 'mainnet',
  known?: SigningPlan,
): VerifiedPsbt {
  if (!sameEntries(before.global.entries, after.global.entries)) {
    throw failed('the global map (unsigned transaction) differs from what was sent');
  }
  before.outputs.forEach((o, i) => {
    if (!sameEntries(o.entries, after.outputs[i]!.entries))
      throw failed(`output map ${i} differs from what was sent`);
  });
  let plan: SigningPlan;
  try {
    plan = known ?? signingPlan(before, { publicKey: expectedSignerPubkey });
    if (!equalBytes(plan.publicKey, expectedSignerPubkey))
      throw new CountersignError('INTERNAL', "the plan is not the expected signer's");
  } catch (e) {
    if (!isCountersignError(e)) throw e;
    throw failed(`no signing plan for the expected signer (${e.message})`, e);
  }
  const byInput = new Map(plan.inputs.map((p) => [p.inputIndex, p]));
  const recoveryIds = new Map<number, 0 | 1>();
  before.inputs.forEach((input, i) => {
    const was = asMap(input.entries);
    const now = asMap(after.inputs[i]!.entries);
    for (const [k, v] of was) {
      const kept = now.get(k);
      if (kept === undefined || !equalBytes(kept, v))
        throw failed(`input ${i}: pair 0x${k} was removed or changed`);
    }
    const p = byInput.get(i);
    const added = [...now.keys()].filter((k) => !was.has(k));
    const allowed = p === undefined ? undefined : addedKey(p, plan);
    if (p === undefined || allowed === undefined) {
      if (added.length > 0)
        throw failed(`input ${i} does not belong to the signer but gained pair(s) ${added.join(', ')}`);
      return;
    }
    if (added.length !== 1 || added[0] !== allowed) {
      throw failed(`input ${i} must gain exactly its signature (0x${allowed}), gained [${added.join(', ')}]`);
    }
    const v = checkSignature(p, plan, now.get(allowed)!);
    if (v !== undefined) recoveryIds.set(i, v);
  });
  const first = plan.inputs[0]!;
  const pkh = hash160(plan.publicKey);
  const script =
    first.scriptType === 'P2PKH'
      ? p2pkhScript(pkh)
      : first.scriptType === 'P2WPKH'
        ? p2wpkhScript(pkh)
        : p2trScript(plan.taprootOutputKey);
  return {
    hash: txid(before.global.unsignedTx),
    signer: addressFromScript(script, network).address,
    plan,
    signed: after,
    recoveryIds,
  };
}
