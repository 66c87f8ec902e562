/** The Tempo adapter's single entry point (transaction type 0x76, secp256k1 signatures, fee sponsorship). */
export type {
  TempoCall,
  TempoAccessListItem,
  TempoTransaction,
  TempoSignature,
  ParsedSignedTempoTransaction,
  TempoCallFields,
  TempoTransactionFields,
} from './types.js';
export { TEMPO_TX_TYPE, FEE_PAYER_MAGIC } from './types.js';
export type { VerifyTempoOptions, VerifiedTempoTransaction } from './verifySignedTransaction.js';
export type { TempoTransactionToSign } from './parseTransactionToSign.js';
export { parseUnsignedTransaction } from './parseUnsignedTransaction.js';
export { serializeUnsignedTransaction } from './serializeUnsignedTransaction.js';
export { senderDigest } from './senderDigest.js';
export { feePayerDigest } from './feePayerDigest.js';
export { assemble } from './assemble.js';
export { parseSignedTransaction } from './parseSignedTransaction.js';
export { parseTransactionToSign } from './parseTransactionToSign.js';
export { verifySignedTransaction } from './verifySignedTransaction.js';
export { transactionFromFields } from './transactionFromFields.js';
export { describeTransaction } from './describeTransaction.js';
export { tempoAdapter, type TempoSigner } from './adapter.js';
