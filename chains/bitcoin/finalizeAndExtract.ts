import { Psbt as LibPsbt } from 'bitcoinjs-lib';
import { equalBytes } from '../../src/shared/encoding.js';
import { CountersignError, invalid } from '../../src/shared/errors.js';
import { classifyScript, hash160 } from './script.js';
import { serializePsbt } from './serializePsbt.js';
import { spentOutput } from './spentOutput.js';
import type { ExtractedTransaction, Psbt, PsbtInput } from './types.js';

function cannotFinalize(field: string, reason: string) {
  return invalid(field, reason, 'BITCOIN_CANNOT_FINALIZE');
}

/** The input's signatures as finalization takes them: only its key's, present, and for P2WPKH compressed. */
function checkSigned(input: PsbtInput, index: number, script: Uint8Array): void {
  const { type, program } = classifyScript(script);
  switch (type) {
    case 'P2PKH':
    case 'P2WPKH': {
      const own = input.partialSigs.filter(
        (p) => equalBytes(hash160(p.pubkey), program) && (type === 'P2PKH' || p.pubkey.length === 33),
      );
      if (own.length === 0) throw cannotFinalize(`inputs[${index}].partial_sig`, 'the input is not signed');
      // A single-key script takes one signature; another key's would be finalized in its place.
      if (input.partialSigs.length !== 1)
        throw cannotFinalize(`inputs[${index}].partial_sig`, 'a single-key input carries other signatures');
      return;
    }
    case 'P2TR':
      if (input.tapKeySig === undefined)
        throw cannotFinalize(`inputs[${index}].tap_key_sig`, 'the input is not signed');
      return;
    default:
      throw cannotFinalize(
        `inputs[${index}]`,
        `cannot finalize a ${type} input (only P2PKH, P2WPKH and P2TR key path)`,
      );
  }
}

/**
 * BIP-174 finalizer and extractor for single-key inputs (P2PKH scriptSig [sig, pubkey], P2WPKH witness
 * [sig, pubkey], P2TR key-path witness [tap_key_sig]), done by bitcoinjs-lib's `Psbt` after
 * countersign's own check of which inputs can be finalized (with a field error naming the input);
 * inputs that already carry final_scriptsig/final_scriptwitness keep them. Returns the network
 * transaction, txid and wtxid (display order). It does not verify signatures: run verifySignedPsbt first.
 */
export function finalizeAndExtract(psbt: Psbt): ExtractedTransaction {
  const open = psbt.inputs.flatMap((input, i) => {
    if (input.finalScriptSig !== undefined || input.finalScriptWitness !== undefined) return [];
    checkSigned(input, i, spentOutput(psbt, i).script);
    return [i];
  });
  let tx;
  try {
    const lib = LibPsbt.fromBuffer(serializePsbt(psbt));
    for (const i of open) lib.finalizeInput(i);
    // The fee was checked against the request (fee.ts); bitcoinjs's fee-rate ceiling is not ours to apply.
    tx = lib.extractTransaction(true);
  } catch (e) {
    if (e instanceof CountersignError) throw e;
    throw cannotFinalize(
      'inputs',
      `bitcoinjs-lib could not finalize the PSBT (${e instanceof Error ? e.message : String(e)})`,
    );
  }
  return {
    transaction: tx.toBuffer(),
    txid: tx.getHash().reverse(),
    wtxid: tx.getHash(true).reverse(),
  };
}
