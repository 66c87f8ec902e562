import { invalid } from '../../src/shared/errors.js';
import { spentOutput } from './spentOutput.js';
import type { Psbt } from './types.js';

/** Satoshis paid in fees: sum of the spent outputs (from the PSBT's UTXO fields) minus sum of the outputs. */
export function fee(psbt: Psbt): bigint {
  let inputs = 0n;
  psbt.inputs.forEach((_, i) => {
    inputs += spentOutput(psbt, i).value;
  });
  let outputs = 0n;
  for (const o of psbt.global.unsignedTx.outputs) outputs += o.value;
  if (outputs > inputs)
    throw invalid(
      'global.unsigned_tx',
      `outputs (${outputs} sat) exceed inputs (${inputs} sat)`,
      'BITCOIN_MALFORMED_PSBT',
    );
  return inputs - outputs;
}
