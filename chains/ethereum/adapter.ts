import { CountersignError } from '../../src/shared/errors.js';
import type { ChainAdapter } from '../types.js';
import { assembleSignedTransaction } from './assembleSignedTransaction.js';
import { describeTransaction } from './describeTransaction.js';
import { parseUnsignedTransaction } from './parseUnsignedTransaction.js';
import { serializeUnsignedTransaction } from './serializeUnsignedTransaction.js';
import { signingDigest } from './signingDigest.js';
import { transactionFromFields } from './transactionFromFields.js';
import type { EthTransaction, EthTransactionFields } from './types.js';
import { verifySignedTransaction } from './verifySignedTransaction.js';

/**
 * The Ethereum chain adapter (DESIGN.md, "The chain adapter contract"): one secp256k1 signature per
 * transaction; the signer is the address the signature must recover to.
 */
export const ethereumAdapter: ChainAdapter<EthTransaction, EthTransactionFields, string> = {
  serialize: (fields) => serializeUnsignedTransaction(transactionFromFields(fields)),
  parse: parseUnsignedTransaction,
  describe: describeTransaction,
  digests: (tx) => [{ scheme: 'ECDSA_SECP256K1', payload: signingDigest(serializeUnsignedTransaction(tx)) }],
  assemble: (tx, signatures) => {
    const [sig, ...rest] = signatures;
    if (sig === undefined || rest.length > 0) {
      throw new CountersignError(
        'INTERNAL',
        `an Ethereum transaction takes exactly one signature, got ${signatures.length}`,
      );
    }
    return assembleSignedTransaction(tx, { r: sig.r, s: sig.s, yParity: sig.v });
  },
  verify: (signed, unsigned, signer) => {
    const { hash, signer: recovered, signature: sig } = verifySignedTransaction(signed, unsigned, signer);
    return { hash, signer: recovered, signatures: [{ r: sig.r, s: sig.s, v: sig.yParity }] };
  },
};
