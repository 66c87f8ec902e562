/**
 * SignTransaction's `solana` member: the structured fields compile to a wire transaction (or
 * `solana.unsigned`, the whole wire transaction, is parsed strictly); `sign_with` names the
 * required signer, by its base58 address, whose slot is filled.
 */
import { base58 } from '@scure/base';
import {
  parsePublicKey,
  requiredSignerIndex,
  solanaAdapter,
  type SolanaTransaction,
  type SolanaTransactionFields,
} from '../../../chains/solana/index.js';
import type { SolanaTransactionMessage } from '../proto.js';
import { enumValue, unsignedOrFields, type DaemonChain } from './chain.js';

export const solanaChain: DaemonChain<
  SolanaTransaction,
  SolanaTransactionFields,
  string,
  SolanaTransactionMessage
> = {
  member: 'solana',
  transactionType: 'TRANSACTION_TYPE_SOLANA',
  adapter: solanaAdapter,
  input: (m) => unsignedOrFields('solana', m, solanaAdapter, { hasFields, fields: fieldsOf }),
  signer: (_ctx, _org, req) => {
    // A Solana signer is named by its address, the base58 ed25519 public key (canonical spelling).
    parsePublicKey(req.signWith, 'sign_with');
    return Promise.resolve(req.signWith);
  },
  logFields: (input, signer) => ({
    version: input.tx.message.version,
    signerSlot: requiredSignerIndex(input.tx, parsePublicKey(signer, 'sign_with'), 'sign_with'),
    signers: input.tx.message.header.numRequiredSignatures,
  }),
  // The transaction id is the fee payer's signature (slot 0): none while that slot is empty.
  hash: (v) => (v.hash.some((b) => b !== 0) ? base58.encode(v.hash) : ''),
};

function hasFields(m: SolanaTransactionMessage): boolean {
  return (
    m.feePayer !== '' ||
    m.recentBlockhash !== '' ||
    m.instructions.length > 0 ||
    m.addressLookupTables.length > 0 ||
    (m.version !== '' && m.version !== 'SOLANA_MESSAGE_VERSION_UNSPECIFIED')
  );
}

const VERSION = {
  SOLANA_MESSAGE_VERSION_UNSPECIFIED: 'UNSPECIFIED',
  SOLANA_MESSAGE_VERSION_LEGACY: 'LEGACY',
  SOLANA_MESSAGE_VERSION_V0: 'V0',
} as const satisfies Record<string, NonNullable<SolanaTransactionFields['version']>>;

function fieldsOf(m: SolanaTransactionMessage): SolanaTransactionFields {
  const version = m.version === '' ? 'SOLANA_MESSAGE_VERSION_UNSPECIFIED' : m.version;
  return {
    feePayer: m.feePayer,
    recentBlockhash: m.recentBlockhash,
    instructions: m.instructions.map((ix) => ({
      programId: ix.programId,
      accounts: ix.accounts.map((a) => ({
        pubkey: a.pubkey,
        isSigner: a.isSigner,
        isWritable: a.isWritable,
      })),
      data: new Uint8Array(ix.data),
    })),
    addressLookupTables: m.addressLookupTables.map((t) => ({
      address: t.address,
      addresses: [...t.addresses],
    })),
    version: enumValue(VERSION, version, 'solana.version', 'Solana message version'),
  };
}
