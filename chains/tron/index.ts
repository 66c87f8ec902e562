/** The Tron adapter's single entry point (protobuf raw_data, TransferContract, TRC-20 via TriggerSmartContract). */
export type {
  TronTransaction,
  TronContract,
  TronContractParameter,
  TronContractTypeName,
  TronTransactionFields,
  ParsedSignedTronTransaction,
} from './types.js';
export { TRON_CONTRACT_TYPES } from './types.js';
export type { ProtoField } from './protobuf.js';
export { decodeFields, encodeFields } from './protobuf.js';
export type { TronSignature } from './assembleSignedTransaction.js';
export { parseRawData } from './parseRawData.js';
export { serializeRawData } from './serializeRawData.js';
export { txId } from './txId.js';
export { expectedTxIdCheck } from './expectedTxIdCheck.js';
export { rawDataFromFields } from './rawDataFromFields.js';
export { digests } from './digests.js';
export { assembleSignedTransaction } from './assembleSignedTransaction.js';
export { parseSignedTransaction } from './parseSignedTransaction.js';
export { verifySignedTransaction } from './verifySignedTransaction.js';
export { describeTransaction } from './describeTransaction.js';
export { parseTronAddress } from './parseTronAddress.js';
export { encodeTronAddress } from './encodeTronAddress.js';
export { tronAddressFromPublicKey } from './tronAddressFromPublicKey.js';
export { tronAdapter } from './adapter.js';
