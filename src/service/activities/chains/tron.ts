/**
 * sign_transaction for TRANSACTION_TYPE_TRON: `unsignedTransaction` is `raw_data` (tronweb's
 * `raw_data_hex`); the result is the signed `protocol.Transaction` that `/wallet/broadcasthex` takes.
 */
import {
  assembleSignedTransaction,
  describeTransaction,
  encodeTronAddress,
  parseRawData,
  tronAddressFromPublicKey,
  txId,
  type TronTransaction,
} from '../../../../chains/tron/index.js';
import { CountersignError, invalid } from '../../../shared/errors.js';
import { inField } from '../../signing-facts.js';
import type { TransactionChain } from './types.js';

export const tronTransactions: TransactionChain<TronTransaction> = {
  parse: (req) => inField(req.unsignedField, () => parseRawData(req.unsigned)),
  facts: (tx) => ({ chain: 'tron', tx: describeTransaction(tx) }),
  sign: (tx, req, key) => {
    if (key.record.curve !== 'CURVE_SECP256K1')
      throw new CountersignError(
        'CURVE_UNSUPPORTED',
        `${req.signWithField}: Tron transactions need a secp256k1 key; this one is ${key.record.curve}`,
        { field: req.signWithField },
      );
    // The node checks the signature against the contract's owner (or a permission of its account);
    // countersign signs only as the owner itself, so a key that is not the owner signs nothing.
    const signer = tronAddressFromPublicKey(key.publicKey);
    tx.contract.forEach((c, i) => {
      const owner = encodeTronAddress(c.parameter.ownerAddress);
      if (owner !== signer)
        throw invalid(
          req.signWithField,
          `the signer ${signer} is not the owner of the transaction (contract[${i}].owner_address is ${owner})`,
        );
    });
    // txID = sha256(raw_data) of the exact bytes parsed, signed as is (no further hashing).
    const sig = key.sign('ECDSA_SECP256K1', txId(tx.rawData));
    return assembleSignedTransaction(tx, { r: sig.r, s: sig.s, yParity: sig.v });
  },
};
