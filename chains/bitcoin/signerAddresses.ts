import { addressFromScript } from './addressFromScript.js';
import { keyScripts } from './keyScripts.js';
import type { BitcoinNetwork, SignableScriptType } from './types.js';

/** The P2PKH, P2WPKH and BIP-86 P2TR addresses of a 33-byte compressed key on `network`. */
export function signerAddresses(
  publicKey: Uint8Array,
  network: BitcoinNetwork,
): Record<SignableScriptType, string> {
  const s = keyScripts(publicKey);
  return {
    P2PKH: addressFromScript(s.P2PKH, network).address,
    P2WPKH: addressFromScript(s.P2WPKH, network).address,
    P2TR: addressFromScript(s.P2TR, network).address,
  };
}
