/** The Ethereum adapter's single entry point (legacy, EIP-2930, EIP-1559, EIP-4844 body, EIP-7702). */
export type {
  EthTxType,
  EthAccessListItem,
  EthAuthorization,
  EthTransaction,
  EthTransactionFields,
  ParsedSignedTransaction,
} from './types.js';
export type { EthSignature } from './assembleSignedTransaction.js';
export { parseUnsignedTransaction } from './parseUnsignedTransaction.js';
export { serializeUnsignedTransaction } from './serializeUnsignedTransaction.js';
export { signingDigest } from './signingDigest.js';
export { assembleSignedTransaction } from './assembleSignedTransaction.js';
export { parseSignedTransaction } from './parseSignedTransaction.js';
export { verifySignedTransaction } from './verifySignedTransaction.js';
export { transactionFromFields } from './transactionFromFields.js';
export { describeTransaction } from './describeTransaction.js';
export { toChecksumAddress } from './toChecksumAddress.js';
export { parseAddress } from './parseAddress.js';
export { addressFromPublicKey } from './addressFromPublicKey.js';
export { hashPersonalMessage } from './hashPersonalMessage.js';
export { hashTypedDataJson, signedTypedDataJson, type SignedTypedData } from './hashTypedDataJson.js';
export { parseAuthorizationJson } from './parseAuthorizationJson.js';
export { hashAuthorization } from './hashAuthorization.js';
export { recoverAddress } from './recoverAddress.js';
export { ethereumAdapter } from './adapter.js';
