/** sign_transaction for TRANSACTION_TYPE_ETHEREUM. */
import {
  assembleSignedTransaction,
  describeTransaction,
  parseUnsignedTransaction,
  signingDigest,
  type EthTransaction,
} from '../../../../chains/ethereum/index.js';
import { CountersignError } from '../../../shared/errors.js';
import { ethereumAddressOf, inField } from '../../signing-facts.js';
import type { TransactionChain } from './types.js';

export const ethereumTransactions: TransactionChain<EthTransaction> = {
  parse: (req) => inField(req.unsignedField, () => parseUnsignedTransaction(req.unsigned)),
  facts: (tx, rec, req) =>
    rec.curve !== 'CURVE_SECP256K1'
      ? undefined
      : // function_name / function_signature / contract_call_args come from withContractCallFacts.
        { chain: 'eth', tx: { ...describeTransaction(tx, ethereumAddressOf(rec, req.signWithField)) } },
  sign: (tx, req, key) => {
    if (key.record.curve !== 'CURVE_SECP256K1')
      throw new CountersignError(
        'CURVE_UNSUPPORTED',
        `${req.signWithField}: Ethereum transactions need a secp256k1 key; this one is ${key.record.curve}`,
        { field: req.signWithField },
      );
    const sig = key.sign('ECDSA_SECP256K1', signingDigest(req.unsigned));
    return assembleSignedTransaction(tx, { r: sig.r, s: sig.s, yParity: sig.v });
  },
};
