import { invalid } from '../../src/shared/errors.js';
import type { Psbt, TxOutput } from './types.js';

/**
 * The output input `index` spends: from witness_utxo, else from non_witness_utxo (whose txid and
 * agreement with witness_utxo the parser already checked); undefined when the PSBT carries neither.
 */
export function spentOutputOrUndefined(psbt: Psbt, index: number): TxOutput | undefined {
  const input = psbt.inputs[index];
  if (input === undefined) return undefined;
  if (input.witnessUtxo !== undefined) return input.witnessUtxo;
  const vout = psbt.global.unsignedTx.inputs[index]?.vout;
  if (input.nonWitnessUtxo === undefined || vout === undefined) return undefined;
  return input.nonWitnessUtxo.outputs[vout];
}

/** Like {@link spentOutputOrUndefined}, but a missing UTXO is a BITCOIN_MISSING_UTXO error naming the input. */
export function spentOutput(psbt: Psbt, index: number): TxOutput {
  const out = spentOutputOrUndefined(psbt, index);
  if (out === undefined) {
    throw invalid(
      `inputs[${index}].witness_utxo`,
      'the PSBT carries neither witness_utxo nor non_witness_utxo for this input',
      'BITCOIN_MISSING_UTXO',
    );
  }
  return out;
}
