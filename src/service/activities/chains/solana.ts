/**
 * sign_transaction for TRANSACTION_TYPE_SOLANA: `unsignedTransaction` is the hex of the whole wire
 * transaction with zeroed (or other signers') 64-byte slots, legacy or v0, as @turnkey/solana's
 * `TurnkeySigner.signTransaction` sends it (`tx.serialize({requireAllSignatures:false})`). The key
 * signs the message bytes from the wire with ed25519 (RFC 8032, no pre-hash); only its own slot is
 * written, every other byte comes back as it was sent.
 */
import {
  assemble,
  describeTransaction,
  parseWireTransaction,
  requiredSignerIndex,
  type SolanaTransaction,
} from '../../../../chains/solana/index.js';
import { concatBytes } from '../../../shared/encoding.js';
import { CountersignError } from '../../../shared/errors.js';
import { inField } from '../../signing-facts.js';
import type { TransactionChain } from './types.js';

export const solanaTransactions: TransactionChain<SolanaTransaction> = {
  parse: (req) => inField(req.unsignedField, () => parseWireTransaction(req.unsigned)),
  facts: (tx) => ({ chain: 'solana', tx: { ...describeTransaction(tx) } }),
  sign: (tx, req, key) => {
    if (key.record.curve !== 'CURVE_ED25519')
      throw new CountersignError(
        'CURVE_UNSUPPORTED',
        `${req.signWithField}: Solana transactions need an ed25519 key; this one is ${key.record.curve}`,
        { field: req.signWithField },
      );
    // Before signing: a key that is not among the first numRequiredSignatures accounts has no slot.
    requiredSignerIndex(tx, key.publicKey, req.signWithField);
    const sig = key.sign('ED25519', tx.messageBytes);
    return assemble(tx, key.publicKey, concatBytes(sig.r, sig.s));
  },
};
