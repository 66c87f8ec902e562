/** sign_transaction for TRANSACTION_TYPE_ETHEREUM. */
import {
  assembleSignedTransaction,
  parseUnsignedTransaction,
  signingDigest,
} from '../../../../chains/ethereum/index.js';
import { CountersignError } from '../../../shared/errors.js';
import type { TransactionSigner } from './types.js';

export const signEthereumTransaction: TransactionSigner = (req, key) => {
  let tx;
  try {
    tx = parseUnsignedTransaction(req.unsigned);
  } catch (e) {
    // Name the request field; the parser's message says which part of the transaction is wrong.
    if (e instanceof CountersignError)
      throw new CountersignError(e.code, `${req.unsignedField}: ${e.message}`, {
        field: req.unsignedField,
        cause: e,
      });
    throw e;
  }
  if (key.record.curve !== 'CURVE_SECP256K1')
    throw new CountersignError(
      'CURVE_UNSUPPORTED',
      `${req.signWithField}: Ethereum transactions need a secp256k1 key; this one is ${key.record.curve}`,
      { field: req.signWithField },
    );
  const sig = key.sign('ECDSA_SECP256K1', signingDigest(req.unsigned));
  return assembleSignedTransaction(tx, { r: sig.r, s: sig.s, yParity: sig.v });
};
