import { bytesToHex } from '../../src/shared/encoding.js';
import { addressFromScript } from './addressFromScript.js';
import { policyFee } from './fee.js';
import { LOCKTIME_THRESHOLD, type BitcoinNetwork, type Psbt } from './types.js';

/**
 * The `bitcoin.tx` facts policies read (turnkey-api.md 8.3): version, inputs [{tx_id (display-order hex),
 * vout, sequence}], outputs [{value, script_pubkey (hex), address ('' when the script has none),
 * address_type (P2PKH, P2SH, P2WPKH, P2WSH, P2TR, WITNESS_UNKNOWN, OP_RETURN, NONSTANDARD)}],
 * locktime {amount, type: BLOCK_HEIGHT below 500 000 000, else TIMESTAMP} and fee. Amounts are bigint.
 * Every input must carry its UTXO, or the fee — and so the description — cannot be given. The fee is
 * the real one only when the amounts it sums are proven for `signerPublicKey` (see {@link policyFee}).
 */
export function describeTransaction(
  psbt: Psbt,
  network: BitcoinNetwork,
  signerPublicKey?: Uint8Array,
): Record<string, unknown> {
  const tx = psbt.global.unsignedTx;
  return {
    version: tx.version,
    inputs: tx.inputs.map((i) => ({
      tx_id: bytesToHex(i.prevTxid.slice().reverse()),
      vout: i.vout,
      sequence: i.sequence,
    })),
    outputs: tx.outputs.map((o) => {
      const { address, type } = addressFromScript(o.script, network);
      return { value: o.value, script_pubkey: bytesToHex(o.script), address, address_type: type };
    }),
    locktime: {
      amount: BigInt(tx.locktime),
      type: tx.locktime < LOCKTIME_THRESHOLD ? 'BLOCK_HEIGHT' : 'TIMESTAMP',
    },
    fee: policyFee(psbt, signerPublicKey),
  };
}
