import { concatBytes, equalBytes } from '../../src/shared/encoding.js';
import { invalid } from '../../src/shared/errors.js';
import { classifyScript, hash160, pushData } from './script.js';
import { serializeTransaction } from './serializeTransaction.js';
import { spentOutput } from './spentOutput.js';
import { txid } from './txid.js';
import { wtxid } from './wtxid.js';
import type { ExtractedTransaction, Psbt, PsbtInput, TxInput } from './types.js';

function cannotFinalize(field: string, reason: string) {
  return invalid(field, reason, 'BITCOIN_CANNOT_FINALIZE');
}

function ownSig(input: PsbtInput, pubkeyHash: Uint8Array, index: number, compressedOnly: boolean) {
  const sigs = input.partialSigs.filter(
    (p) => equalBytes(hash160(p.pubkey), pubkeyHash) && (!compressedOnly || p.pubkey.length === 33),
  );
  const sig = sigs[0];
  if (sig === undefined) throw cannotFinalize(`inputs[${index}].partial_sig`, 'the input is not signed');
  return sig;
}

/**
 * BIP-174 finalizer and extractor for single-key inputs: P2PKH scriptSig [sig, pubkey], P2WPKH witness
 * [sig, pubkey] (compressed key, BIP-143), P2TR key-path witness [tap_key_sig]; inputs that already carry
 * final_scriptsig/final_scriptwitness keep them. Returns the network transaction, txid and wtxid. It does not
 * verify signatures: run verifySignedPsbt first.
 */
export function finalizeAndExtract(psbt: Psbt): ExtractedTransaction {
  const tx = psbt.global.unsignedTx;
  const inputs: TxInput[] = tx.inputs.map((txIn, i) => {
    const input = psbt.inputs[i] as PsbtInput;
    if (input.finalScriptSig !== undefined || input.finalScriptWitness !== undefined) {
      return {
        ...txIn,
        scriptSig: input.finalScriptSig ?? new Uint8Array(0),
        witness: input.finalScriptWitness ?? [],
      };
    }
    const { type, program } = classifyScript(spentOutput(psbt, i).script);
    switch (type) {
      case 'P2PKH': {
        const s = ownSig(input, program, i, false);
        return { ...txIn, scriptSig: concatBytes(pushData(s.signature), pushData(s.pubkey)), witness: [] };
      }
      case 'P2WPKH': {
        const s = ownSig(input, program, i, true);
        return { ...txIn, scriptSig: new Uint8Array(0), witness: [s.signature, s.pubkey] };
      }
      case 'P2TR':
        if (input.tapKeySig === undefined) {
          throw cannotFinalize(`inputs[${i}].tap_key_sig`, 'the input is not signed');
        }
        return { ...txIn, scriptSig: new Uint8Array(0), witness: [input.tapKeySig] };
      default:
        throw cannotFinalize(
          `inputs[${i}]`,
          `cannot finalize a ${type} input (only P2PKH, P2WPKH and P2TR key path)`,
        );
    }
  });
  const finalTx = { ...tx, inputs };
  return {
    transaction: serializeTransaction(finalTx, { witness: true }),
    txid: txid(finalTx),
    wtxid: wtxid(finalTx),
  };
}
