import { concatBytes } from '../../src/shared/encoding.js';
import { CountersignError } from '../../src/shared/errors.js';
import type { ChainAdapter } from '../types.js';
import { describeTransaction } from './describeTransaction.js';
import { verifyEd25519 } from './ed25519.js';
import { messageFromFields } from './messageFromFields.js';
import { parseWireTransaction } from './parseWireTransaction.js';
import { serializeWireTransaction } from './serializeWireTransaction.js';
import type { SolanaTransaction, SolanaTransactionFields } from './types.js';
import { unsignedTransaction } from './unsignedTransaction.js';
import { verifySignedTransaction } from './verifySignedTransaction.js';

/**
 * The Solana chain adapter (DESIGN.md, "The chain adapter contract"). The generic contract passes
 * no signer to `digests` and `assemble`: the digest is the message whatever the signer, and
 * `assemble` puts each signature into the one required signer's slot whose key it verifies for.
 * Code that knows `sign_with` should call `digests`/`assemble` from the index instead, which
 * refuse a key that is not a required signer with a field error.
 */
export const solanaAdapter: ChainAdapter<SolanaTransaction, SolanaTransactionFields> = {
  serialize: (fields) => serializeWireTransaction(unsignedTransaction(messageFromFields(fields))),
  parse: parseWireTransaction,
  describe: (tx) => describeTransaction(tx),
  digests: (tx) => [{ scheme: 'ED25519', payload: tx.messageBytes }],
  assemble: (tx, _unsigned, signatures) => {
    if (signatures.length === 0) throw new CountersignError('INTERNAL', 'no signature to assemble');
    const slots = [...tx.signatures];
    const filled = new Set<number>();
    const required = tx.message.header.numRequiredSignatures;
    signatures.forEach((sig, n) => {
      const signature = concatBytes(sig.r, sig.s);
      let slot = -1;
      for (let i = 0; i < required && slot < 0; i++) {
        if (verifyEd25519(signature, tx.messageBytes, tx.message.staticAccountKeys[i] as Uint8Array))
          slot = i;
      }
      if (slot < 0 || filled.has(slot)) {
        throw new CountersignError(
          'SIGNATURE_VERIFICATION_FAILED',
          `Solana signature verification failed: signature ${n} ${slot < 0 ? 'verifies for no required signer' : 'repeats a slot'}`,
        );
      }
      filled.add(slot);
      slots[slot] = signature;
    });
    return serializeWireTransaction({ ...tx, signatures: slots });
  },
  verify: verifySignedTransaction,
};
