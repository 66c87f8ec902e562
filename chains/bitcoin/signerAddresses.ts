import { addressFromScript } from './addressFromScript.js';
import { hash160, p2pkhScript, p2trScript, p2wpkhScript } from './script.js';
import { taprootOutputKey } from './taprootOutputKey.js';
import type { BitcoinNetwork, SignableScriptType } from './types.js';

/** The P2PKH, P2WPKH and BIP-86 P2TR addresses of a 33-byte compressed key on `network`. */
export function signerAddresses(
  publicKey: Uint8Array,
  network: BitcoinNetwork,
): Record<SignableScriptType, string> {
  const pkh = hash160(publicKey);
  return {
    P2PKH: addressFromScript(p2pkhScript(pkh), network).address,
    P2WPKH: addressFromScript(p2wpkhScript(pkh), network).address,
    P2TR: addressFromScript(p2trScript(taprootOutputKey(publicKey)), network).address,
  };
}
