/** Key management for the wallet service: the only entry point of src/service/keys. */
export {
  ADDRESS_FORMATS,
  CURVES,
  assertNever,
  curveFitsFormat,
  isAddressFormat,
  isCurve,
  type AddressFormat,
  type Curve,
} from './curves.js';
export { MNEMONIC_LENGTHS, generateMnemonic, mnemonicToSeed, validateMnemonic } from './mnemonic.js';
export { parseDerivationPath } from './parseDerivationPath.js';
export { derivePrivateKey } from './derivePrivateKey.js';
export { generatePrivateKey } from './generatePrivateKey.js';
export { publicKeyOf } from './publicKeyOf.js';
export { deriveAddress } from './deriveAddress.js';
export type { SignatureOut } from './signature.js';
export { signEcdsaSecp256k1 } from './signEcdsaSecp256k1.js';
export { signEcdsaP256 } from './signEcdsaP256.js';
export { signEd25519 } from './signEd25519.js';
export { signSchnorr, signSchnorrTaproot } from './signSchnorr.js';
export { KeyVault } from './KeyVault.js';
export { loadOrCreateMasterKey } from './loadOrCreateMasterKey.js';
export {
  HPKE_AEADS,
  TURNKEY_HPKE_INFO,
  assertP256UncompressedPublicKey,
  hpkeSeal,
  openFromTurnkeySender,
  sealToTurnkeyTarget,
  setupBaseRecipient,
  setupBaseSender,
  type HpkeAead,
  type HpkeRecipientContext,
  type HpkeSealed,
  type HpkeSenderContext,
} from './hpke.js';
export {
  SERVICE_APP_PROOF_ENCRYPT_KEY_ID,
  SERVICE_APP_PROOF_SIGN_KEY_ID,
  SERVICE_KEY_IDS,
  SERVICE_NOTARIZER_KEY_ID,
  SERVICE_ONRAMP_KEY_ID,
  SERVICE_TLS_FETCHER_KEY_ID,
  SERVICE_SIGNER_KEY_ID,
  generateServiceKey,
  signWithServiceKey,
  verifyServiceKey,
  withServiceKey,
  type SealedServiceKey,
} from './serviceKey.js';
