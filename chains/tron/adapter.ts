import { CountersignError, invalid } from '../../src/shared/errors.js';
import { equalBytes } from '../../src/shared/encoding.js';
import type { ChainAdapter } from '../types.js';
import { assembleSignedTransaction } from './assembleSignedTransaction.js';
import { describeTransaction } from './describeTransaction.js';
import { digests } from './digests.js';
import { encodeTronAddress } from './encodeTronAddress.js';
import { parseRawData } from './parseRawData.js';
import { parseSignedTransaction } from './parseSignedTransaction.js';
import { parseTronAddress } from './parseTronAddress.js';
import { rawDataFromFields } from './rawDataFromFields.js';
import type { TronTransaction, TronTransactionFields } from './types.js';
import { verifySignedTransaction } from './verifySignedTransaction.js';

/**
 * The Tron chain adapter (DESIGN.md, "The chain adapter contract"): unsigned bytes are `raw_data`,
 * one secp256k1 signature over the txID, signed bytes are `protocol.Transaction` for broadcasthex.
 * The signer is the base58check address (`T…`) that owns every contract of the transaction.
 */
export const tronAdapter: ChainAdapter<TronTransaction, TronTransactionFields, string> = {
  serialize: rawDataFromFields,
  parse: parseRawData,
  describe: (tx) => describeTransaction(tx),
  digests: (tx, signer) => {
    // Refused before anything is signed: the node rejects a signature that is not the owner's.
    const owner = parseTronAddress(signer, 'sign_with');
    tx.contract.forEach((c, i) => {
      if (!equalBytes(c.parameter.ownerAddress, owner)) {
        throw invalid(
          'sign_with',
          `${signer} is not the owner of the transaction (contract[${i}].owner_address is ${encodeTronAddress(c.parameter.ownerAddress)})`,
        );
      }
    });
    return digests(tx);
  },
  assemble: (tx, signatures) => {
    const [sig, ...rest] = signatures;
    if (sig === undefined || rest.length > 0) {
      throw new CountersignError(
        'INTERNAL',
        `a Tron transaction takes exactly one signature here, got ${signatures.length}`,
      );
    }
    return assembleSignedTransaction(tx, { r: sig.r, s: sig.s, yParity: sig.v });
  },
  verify: (signed, unsigned, signer) => {
    const v = verifySignedTransaction(signed, unsigned, signer);
    const [sig] = parseSignedTransaction(signed).signatures;
    if (sig === undefined) throw new Error('the signed transaction carries no signature');
    // v is 27/28 on the wire from some signers, 0/1 from others; the contract speaks y-parity.
    const parity = sig[64] as number;
    // Object.assign, not a spread followed by a new property: this V8 (Node 20) would make a new
    // hidden class for that on every call.
    return Object.assign({}, v, {
      signatures: [{ r: sig.slice(0, 32), s: sig.slice(32, 64), v: parity >= 27 ? parity - 27 : parity }],
    });
  },
};
