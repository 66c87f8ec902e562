import { concatBytes } from '../../src/shared/encoding.js';
import { CountersignError } from '../../src/shared/errors.js';
import type { ChainAdapter } from '../types.js';
import { assemble } from './assemble.js';
import { describeTransaction } from './describeTransaction.js';
import { digests } from './digests.js';
import { messageFromFields } from './messageFromFields.js';
import { parsePublicKey } from './publicKey.js';
import { parseWireTransaction } from './parseWireTransaction.js';
import { serializeWireTransaction } from './serializeWireTransaction.js';
import type { SolanaTransaction, SolanaTransactionFields } from './types.js';
import { unsignedTransaction } from './unsignedTransaction.js';
import { verifySignedTransaction } from './verifySignedTransaction.js';

/**
 * The Solana chain adapter (DESIGN.md, "The chain adapter contract"). The signer is the base58
 * address (ed25519 public key) of one required signer: it signs the message itself, and its
 * signature goes into its own slot, every other slot kept as sent (partial signing).
 */
export const solanaAdapter: ChainAdapter<SolanaTransaction, SolanaTransactionFields, string> = {
  serialize: (fields) => serializeWireTransaction(unsignedTransaction(messageFromFields(fields))),
  parse: parseWireTransaction,
  describe: (tx) => describeTransaction(tx),
  digests: (tx, signer) => digests(tx, parsePublicKey(signer, 'sign_with')),
  assemble: (tx, signatures, signer) => {
    const [sig, ...rest] = signatures;
    if (sig === undefined || rest.length > 0) {
      throw new CountersignError(
        'INTERNAL',
        `one signer fills one slot, got ${signatures.length} signatures`,
      );
    }
    return assemble(tx, parsePublicKey(signer, 'sign_with'), concatBytes(sig.r, sig.s));
  },
  verify: (signed, unsigned, signer) => {
    const v = verifySignedTransaction(signed, unsigned, signer);
    // Object.assign, not a spread followed by a new property: this V8 (Node 20) would make a new
    // hidden class for that on every call.
    return Object.assign({}, v, {
      signatures: [{ r: v.signature.slice(0, 32), s: v.signature.slice(32, 64), v: 0 }],
    });
  },
};
