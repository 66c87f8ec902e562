import { CountersignError } from '../../src/shared/errors.js';
import type { ChainAdapter } from '../types.js';
import { assembleSignedTransaction } from './assembleSignedTransaction.js';
import { describeTransaction } from './describeTransaction.js';
import { digests } from './digests.js';
import { parseRawData } from './parseRawData.js';
import { rawDataFromFields } from './rawDataFromFields.js';
import type { TronTransaction, TronTransactionFields } from './types.js';
import { verifySignedTransaction } from './verifySignedTransaction.js';

/**
 * The Tron chain adapter (DESIGN.md, "The chain adapter contract"): unsigned bytes are `raw_data`,
 * one secp256k1 signature over the txID, signed bytes are `protocol.Transaction` for broadcasthex.
 */
export const tronAdapter: ChainAdapter<TronTransaction, TronTransactionFields> = {
  serialize: rawDataFromFields,
  parse: parseRawData,
  describe: (tx) => describeTransaction(tx),
  digests: (tx) => digests(tx),
  assemble: (tx, _unsigned, signatures) => {
    const [sig, ...rest] = signatures;
    if (sig === undefined || rest.length > 0) {
      throw new CountersignError(
        'INTERNAL',
        `a Tron transaction takes exactly one signature here, got ${signatures.length}`,
      );
    }
    return assembleSignedTransaction(tx, { r: sig.r, s: sig.s, yParity: sig.v });
  },
  verify: verifySignedTransaction,
};
