/** The Bitcoin adapter's single entry point: transactions, BIP-174 v0 PSBTs, sighashes, signing and verification. */
export type {
  BitcoinNetwork,
  BitcoinTransaction,
  BitcoinTransactionFields,
  ExtractedTransaction,
  PlannedInput,
  Psbt,
  PsbtEntry,
  PsbtGlobal,
  PsbtInput,
  PsbtOutput,
  SignableScriptType,
  SigningPlan,
  TxInput,
  TxOutput,
} from './types.js';
export type { BitcoinSigner } from './signingPlan.js';
export type { ScriptType } from './script.js';
export { BITCOIN_NETWORKS, MAX_MONEY, SIGHASH_ALL, SIGHASH_DEFAULT } from './types.js';
export { parseTransaction } from './parseTransaction.js';
export { serializeTransaction } from './serializeTransaction.js';
export { txid } from './txid.js';
export { wtxid } from './wtxid.js';
export { parsePsbt } from './parsePsbt.js';
export { serializePsbt } from './serializePsbt.js';
export { legacySighash } from './legacySighash.js';
export { segwitV0Sighash } from './segwitV0Sighash.js';
export { taprootSighash } from './taprootSighash.js';
export { taprootOutputKey } from './taprootOutputKey.js';
export { signingPlan } from './signingPlan.js';
export { applySignatures } from './applySignatures.js';
export { verifySignedPsbt } from './verifySignedPsbt.js';
export { finalizeAndExtract } from './finalizeAndExtract.js';
export { assertFinalizable } from './assertFinalizable.js';
export { planSignatures } from './planSignatures.js';
export { inRequest, type RequestFields } from './inRequest.js';
export { fee, policyFee } from './fee.js';
export { describeTransaction } from './describeTransaction.js';
export { addressFromScript } from './addressFromScript.js';
export { parseAddress } from './parseAddress.js';
export { signerAddresses } from './signerAddresses.js';
export { transactionFromFields } from './transactionFromFields.js';
export { bitcoinAdapter, isAddressOf, type BitcoinAdapterSigner } from './adapter.js';
