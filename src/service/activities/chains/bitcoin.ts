/**
 * sign_transaction for TRANSACTION_TYPE_BITCOIN: `unsignedTransaction` is a BIP-174 (v0) PSBT. Only the
 * inputs that pay to the key (P2PKH, P2WPKH, BIP-86 P2TR) are signed, each over the sighash this service
 * computed from the PSBT itself; the answer is the signed PSBT, not finalized (reference 2.3).
 */
import {
  applySignatures,
  describeTransaction,
  fee,
  inRequest,
  parsePsbt,
  serializePsbt,
  signingPlan,
  type Psbt,
} from '../../../../chains/bitcoin/index.js';
import { hexToBytes } from '../../../shared/encoding.js';
import { CountersignError } from '../../../shared/errors.js';
import { bitcoinNetworkOf } from '../../signing-facts.js';
import type { TransactionChain } from './types.js';

export const bitcoinTransactions: TransactionChain<Psbt> = {
  parse: (req) => inRequest(req, () => parsePsbt(req.unsigned)),
  facts: (psbt, rec, req) => ({
    chain: 'bitcoin',
    tx: inRequest(req, () =>
      describeTransaction(psbt, bitcoinNetworkOf(rec), hexToBytes(rec.publicKey, 'publicKey')),
    ),
  }),
  sign: (psbt, req, key) => {
    if (key.record.curve !== 'CURVE_SECP256K1')
      throw new CountersignError(
        'CURVE_UNSUPPORTED',
        `${req.signWithField}: Bitcoin transactions need a secp256k1 key; this one is ${key.record.curve}`,
        { field: req.signWithField },
      );
    const plan = inRequest(req, () => signingPlan(psbt, { publicKey: key.publicKey }));
    // Every spent amount must be known (BITCOIN_MISSING_UTXO otherwise) and cover the outputs.
    inRequest(req, () => fee(psbt));
    // SCHNORR_BIP340 signs with the BIP-86 tweak of the key, the key of a key-path P2TR output.
    const signatures = plan.inputs.map((p) => key.sign(p.scheme, p.digest));
    return serializePsbt(applySignatures(psbt, plan, signatures));
  },
};
