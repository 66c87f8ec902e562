import { equalBytes } from '../../src/shared/encoding.js';
import { CountersignError, invalid } from '../../src/shared/errors.js';
import { isValidPublicKey } from '../../src/shared/secp256k1.js';
import { legacySighash } from './legacySighash.js';
import { keyScripts } from './keyScripts.js';
import { segwitV0Sighash } from './segwitV0Sighash.js';
import { spentOutput, spentOutputOrUndefined } from './spentOutput.js';
import { taprootSighash } from './taprootSighash.js';
import { SIGHASH_ALL, SIGHASH_DEFAULT, type PlannedInput, type Psbt, type SigningPlan } from './types.js';

/** The secp256k1 signer whose inputs are to be signed. */
export interface BitcoinSigner {
  /** 33-byte compressed SEC1 public key. */
  readonly publicKey: Uint8Array;
}

function refuseSighash(index: number, type: number, allowed: string): CountersignError {
  // NONE/SINGLE/ANYONECANPAY would let others change what is paid after we signed.
  return invalid(
    `inputs[${index}].sighash_type`,
    `sighash type 0x${type.toString(16)} is not allowed (only ${allowed})`,
    'BITCOIN_SIGHASH_UNSUPPORTED',
  );
}

/**
 * Finds the inputs that belong to `signer` — P2PKH to hash160(pubkey), P2WPKH with that program, P2TR to
 * the BIP-86 output key of pubkey — and computes each one's sighash from the PSBT's own bytes. Inputs of
 * other keys are left alone. Refuses sighash types other than ALL (or DEFAULT for taproot), inputs the
 * signer already signed, and a PSBT in which no input belongs to the signer (field `sign_with`).
 */
export function signingPlan(psbt: Psbt, signer: BitcoinSigner): SigningPlan {
  const { publicKey } = signer;
  if (publicKey.length !== 33 || !isValidPublicKey(publicKey)) {
    throw invalid('sign_with', 'public key must be a valid 33-byte compressed secp256k1 key');
  }
  const { P2PKH: p2pkh, P2WPKH: p2wpkh, P2TR: p2tr, outputKey } = keyScripts(publicKey, 'sign_with');
  const tx = psbt.global.unsignedTx;
  const planned: PlannedInput[] = [];
  // BIP-341 commits to every input's spent output; collected lazily, once, when a taproot input is ours.
  let allSpent: ReturnType<typeof spentOutput>[] | undefined;

  psbt.inputs.forEach((input, i) => {
    const spent = spentOutputOrUndefined(psbt, i);
    if (spent === undefined) return; // cannot be shown to be ours; never signed
    const script = spent.script;
    const isP2pkh = equalBytes(script, p2pkh);
    const isP2wpkh = equalBytes(script, p2wpkh);
    const isP2tr = equalBytes(script, p2tr);
    if (!isP2pkh && !isP2wpkh && !isP2tr) return;
    if (input.finalScriptSig !== undefined || input.finalScriptWitness !== undefined) {
      throw invalid(
        `inputs[${i}].final_scriptwitness`,
        'an input of the signer is already finalized',
        'BITCOIN_INPUT_ALREADY_SIGNED',
      );
    }
    if (isP2tr) {
      const type = input.sighashType ?? SIGHASH_DEFAULT;
      if (type !== SIGHASH_DEFAULT && type !== SIGHASH_ALL) throw refuseSighash(i, type, 'DEFAULT or ALL');
      if (input.tapKeySig !== undefined) {
        throw invalid(
          `inputs[${i}].tap_key_sig`,
          'the input is already signed',
          'BITCOIN_INPUT_ALREADY_SIGNED',
        );
      }
      if (input.tapInternalKey !== undefined && !equalBytes(input.tapInternalKey, publicKey.subarray(1))) {
        throw invalid(
          `inputs[${i}].tap_internal_key`,
          "is not the signer's key, yet the input pays to its BIP-86 output key",
          'BITCOIN_MALFORMED_PSBT',
        );
      }
      allSpent ??= tx.inputs.map((_, j) => spentOutput(psbt, j));
      planned.push({
        inputIndex: i,
        scriptType: 'P2TR',
        scheme: 'SCHNORR_BIP340',
        sighashType: type,
        digest: taprootSighash(tx, i, allSpent, type),
      });
      return;
    }
    const type = input.sighashType ?? SIGHASH_ALL;
    if (type !== SIGHASH_ALL) throw refuseSighash(i, type, 'ALL');
    if (input.partialSigs.some((p) => equalBytes(p.pubkey, publicKey))) {
      throw invalid(
        `inputs[${i}].partial_sig`,
        'the input is already signed by the signer',
        'BITCOIN_INPUT_ALREADY_SIGNED',
      );
    }
    if (isP2pkh) {
      // BIP-174: legacy inputs carry the whole previous transaction so the amount is provable.
      if (input.nonWitnessUtxo === undefined) {
        throw invalid(
          `inputs[${i}].non_witness_utxo`,
          'is required for a P2PKH input (BIP-174)',
          'BITCOIN_MISSING_UTXO',
        );
      }
      planned.push({
        inputIndex: i,
        scriptType: 'P2PKH',
        scheme: 'ECDSA_SECP256K1',
        sighashType: type,
        digest: legacySighash(tx, i, script, type),
      });
    } else {
      planned.push({
        inputIndex: i,
        scriptType: 'P2WPKH',
        scheme: 'ECDSA_SECP256K1',
        sighashType: type,
        // BIP-143: the P2WPKH scriptCode is the P2PKH script of the same key hash.
        digest: segwitV0Sighash(tx, i, p2pkh, spent.value, type),
      });
    }
  });
  if (planned.length === 0) {
    throw invalid(
      'sign_with',
      'no input of the PSBT spends an output of this key (P2PKH, P2WPKH or P2TR)',
      'BITCOIN_NO_INPUT_FOR_SIGNER',
    );
  }
  return { publicKey: publicKey.slice(), taprootOutputKey: outputKey.slice(), inputs: planned };
}
