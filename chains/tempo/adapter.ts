import { keccak_256 } from '@noble/hashes/sha3.js';
import { CountersignError } from '../../src/shared/errors.js';
import type { ChainAdapter } from '../types.js';
import { assemble } from './assemble.js';
import { describeTransaction } from './describeTransaction.js';
import { parseUnsignedTransaction } from './parseUnsignedTransaction.js';
import { serializeUnsignedTransaction } from './serializeUnsignedTransaction.js';
import { transactionFromFields } from './transactionFromFields.js';
import type { TempoTransaction, TempoTransactionFields } from './types.js';
import { verifySignedTransaction } from './verifySignedTransaction.js';

/**
 * The Tempo chain adapter (DESIGN.md, "The chain adapter contract"): one secp256k1 sender
 * signature over keccak256(unsigned). For a sponsored transaction `assemble` also takes the fee
 * payer's signature second (its digest needs the sender: `feePayerDigest(tx, sender)`), and `verify`
 * checks it recovers when present.
 */
export const tempoAdapter: ChainAdapter<TempoTransaction, TempoTransactionFields> = {
  serialize: (fields) => serializeUnsignedTransaction(transactionFromFields(fields)),
  parse: parseUnsignedTransaction,
  describe: describeTransaction,
  // `unsigned` parsed strictly into `tx`, so it is exactly serializeUnsignedTransaction(tx).
  digests: (_tx, unsigned) => [{ scheme: 'ECDSA_SECP256K1', payload: keccak_256(unsigned) }],
  assemble: (tx, _unsigned, signatures) => {
    const [sender, feePayer, ...rest] = signatures;
    if (sender === undefined || rest.length > 0 || (feePayer !== undefined && !tx.sponsored)) {
      throw new CountersignError(
        'INTERNAL',
        `a Tempo transaction takes one signature (two when sponsored), got ${signatures.length}`,
      );
    }
    const toSig = (s: typeof sender) => ({ r: s.r, s: s.s, yParity: s.v });
    return feePayer === undefined
      ? assemble(tx, toSig(sender))
      : assemble(tx, toSig(sender), toSig(feePayer));
  },
  verify: (signed, unsigned, expectedSigner) => verifySignedTransaction(signed, unsigned, expectedSigner),
};
