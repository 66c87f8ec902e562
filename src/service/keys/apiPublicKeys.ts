/**
 * API-key public keys (hex, as the public API spells them) as node KeyObjects: what the stamp check
 * verifies with and what activities that register a key check it is. Cached: keys are few and reused.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';

// SubjectPublicKeyInfo prefixes for a compressed P-256 point and a raw Ed25519 key.
export const P256_SPKI_COMPRESSED = Buffer.from(
  '3039301306072a8648ce3d020106082a8648ce3d030107032200',
  'hex',
);
const ED25519_SPKI = Buffer.from('302a300506032b6570032100', 'hex');

const keyCache = new Map<string, KeyObject>();
const KEY_CACHE_MAX = 10_000;

function cachedKey(cacheKey: string, make: () => KeyObject): KeyObject {
  let k = keyCache.get(cacheKey);
  if (k === undefined) {
    k = make();
    if (keyCache.size >= KEY_CACHE_MAX) keyCache.clear();
    keyCache.set(cacheKey, k);
  }
  return k;
}

/** A compressed P-256 public key (hex) as a node KeyObject, or undefined when it is not a point. */
export function p256Key(publicKeyHex: string): KeyObject | undefined {
  if (publicKeyHex.length !== 66) return undefined;
  try {
    return cachedKey(`p256:${publicKeyHex}`, () =>
      createPublicKey({
        key: Buffer.concat([P256_SPKI_COMPRESSED, Buffer.from(publicKeyHex, 'hex')]),
        format: 'der',
        type: 'spki',
      }),
    );
  } catch {
    return undefined;
  }
}

/** A raw Ed25519 public key (hex) as a node KeyObject, or undefined when it is not one. */
export function ed25519Key(publicKeyHex: string): KeyObject | undefined {
  if (publicKeyHex.length !== 64) return undefined;
  try {
    return cachedKey(`ed25519:${publicKeyHex}`, () =>
      createPublicKey({
        key: Buffer.concat([ED25519_SPKI, Buffer.from(publicKeyHex, 'hex')]),
        format: 'der',
        type: 'spki',
      }),
    );
  } catch {
    return undefined;
  }
}
