/** The Solana adapter's single entry point (wire transactions with legacy and v0 messages). */
export type {
  SolanaAccountMetaFields,
  SolanaAddressLookupTableFields,
  SolanaAddressTableLookup,
  SolanaCompiledInstruction,
  SolanaInstructionFields,
  SolanaMessage,
  SolanaMessageHeader,
  SolanaMessageVersion,
  SolanaTransaction,
  SolanaTransactionFields,
} from './types.js';
export type {
  SolanaAccountFacts,
  SolanaInstructionFacts,
  SolanaLookupFacts,
  SolanaSplTransferFacts,
  SolanaTransactionFacts,
  SolanaTransferFacts,
} from './describeTransaction.js';
export type { SolanaVerifiedTransaction } from './verifySignedTransaction.js';
export { MAX_TRANSACTION_SIZE } from './types.js';
export { parseWireTransaction } from './parseWireTransaction.js';
export { serializeWireTransaction } from './serializeWireTransaction.js';
export { parseMessage } from './parseMessage.js';
export { serializeMessage } from './serializeMessage.js';
export { messageFromFields } from './messageFromFields.js';
export { unsignedTransaction } from './unsignedTransaction.js';
export { requiredSignerIndex } from './requiredSignerIndex.js';
export { digests } from './digests.js';
export { assemble } from './assemble.js';
export { verifySignedTransaction } from './verifySignedTransaction.js';
export { transactionId } from './transactionId.js';
export { describeTransaction, ADDRESS_TABLE_LOOKUP } from './describeTransaction.js';
export { verifyEd25519 } from './ed25519.js';
export { parsePublicKey, encodePublicKey } from './publicKey.js';
export { solanaAdapter } from './adapter.js';
