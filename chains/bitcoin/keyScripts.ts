import { BoundedMemo } from '../../src/shared/boundedMemo.js';
import { bytesToHex } from '../../src/shared/encoding.js';
import { hash160, p2pkhScript, p2trScript, p2wpkhScript } from './script.js';
import { taprootOutputKey } from './taprootOutputKey.js';
import type { SignableScriptType } from './types.js';

/** The output scripts a key signs for, and its BIP-86 output key. Shared: never mutate them. */
export type KeyScripts = Readonly<Record<SignableScriptType, Uint8Array>> & {
  readonly outputKey: Uint8Array;
};

/** Per key: a hash160 and a taproot tweak took ~10 µs, once for the policy facts and again to sign. */
const MEMO = new BoundedMemo<string, KeyScripts>(1024);

/**
 * The P2PKH, P2WPKH and BIP-86 P2TR scripts of a 33-byte compressed key, remembered per key. The
 * caller checks the key; `field` names it if it has no output key (taprootOutputKey).
 */
export function keyScripts(publicKey: Uint8Array, field?: string): KeyScripts {
  return MEMO.through(bytesToHex(publicKey), () => {
    const pkh = hash160(publicKey);
    const outputKey = taprootOutputKey(publicKey, field);
    return { P2PKH: p2pkhScript(pkh), P2WPKH: p2wpkhScript(pkh), P2TR: p2trScript(outputKey), outputKey };
  });
}
