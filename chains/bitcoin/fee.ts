import { equalBytes } from '../../src/shared/encoding.js';
import { invalid } from '../../src/shared/errors.js';
import { isValidPublicKey } from '../../src/shared/secp256k1.js';
import { keyScripts } from './keyScripts.js';
import { spentOutput, spentOutputOrUndefined } from './spentOutput.js';
import { MAX_MONEY, type Psbt, type SignableScriptType } from './types.js';

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

/**
 * The fee policies read (`bitcoin.tx.fee`): {@link fee} when every amount it sums is proven, else
 * MAX_MONEY, the most a transaction can pay, so that a fee limit written either as an allow or as a
 * deny refuses it. An amount is proven by the input's non_witness_utxo (whose txid the parser
 * checked), by a BIP-341 signature of `signerPublicKey` (it commits to every input's amount), or,
 * for the key's one segwit v0 input, by its own BIP-143 signature, which commits to that amount
 * alone. Without that rule, two requests over the same transaction, each lying about the amount of
 * the other's segwit v0 input, would each show a small fee and each return one valid signature,
 * together a transaction paying a large one (CVE-2020-14199).
 */
export function policyFee(psbt: Psbt, signerPublicKey?: Uint8Array): bigint {
  const total = fee(psbt);
  const unproven = psbt.inputs.flatMap((input, i) => (input.nonWitnessUtxo === undefined ? [i] : []));
  if (unproven.length === 0) return total;
  const ours = signerInputs(psbt, signerPublicKey);
  if (ours.some((o) => o.type === 'P2TR')) return total;
  // One segwit v0 input of the key: its signature commits to its amount, the one unproven. (With
  // two, each request could prove one and lie about the other, and the two requests' valid
  // signatures would combine. The key's legacy inputs always carry their previous transaction.)
  const v0 = ours.filter((o) => o.type === 'P2WPKH');
  if (v0.length === 1 && unproven.length === 1 && unproven[0] === v0[0]?.index) return total;
  return MAX_MONEY;
}

/** The inputs whose spent output (as the PSBT states it) pays to the key, with the script type. */
function signerInputs(
  psbt: Psbt,
  publicKey: Uint8Array | undefined,
): { index: number; type: SignableScriptType }[] {
  if (publicKey === undefined || publicKey.length !== 33 || !isValidPublicKey(publicKey)) return [];
  const scripts = keyScripts(publicKey);
  return psbt.inputs.flatMap((_, index) => {
    const script = spentOutputOrUndefined(psbt, index)?.script;
    const type = script === undefined ? undefined : SIGNABLE.find((t) => equalBytes(scripts[t], script));
    return type === undefined ? [] : [{ index, type }];
  });
}

const SIGNABLE: readonly SignableScriptType[] = ['P2PKH', 'P2WPKH', 'P2TR'];
