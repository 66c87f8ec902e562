/** Fixed-seed ed25519 test signers (node:crypto) for the Solana suites. Never use these keys for real funds. */
import { createPrivateKey, createPublicKey, sign } from 'node:crypto';
import { base58 } from '@scure/base';

// RFC 8410: PKCS#8 DER of an Ed25519 private key is this prefix followed by the 32-byte seed.
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export interface TestSigner {
  readonly publicKey: Uint8Array;
  /** base58 */
  readonly address: string;
  sign(message: Uint8Array): Uint8Array;
}

/** A signer from a 32-byte seed. */
export function signerFromSeed(seed: Uint8Array): TestSigner {
  const key = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const spki = createPublicKey(key).export({ format: 'der', type: 'spki' });
  const publicKey = new Uint8Array(spki.subarray(spki.length - 32));
  return {
    publicKey,
    address: base58.encode(publicKey),
    sign: (message) => new Uint8Array(sign(null, message, key)),
  };
}

/** The n-th fixed test signer: seed = 32 bytes of (n + 1). */
export function testSigner(n: number): TestSigner {
  return signerFromSeed(new Uint8Array(32).fill(n + 1));
}

export const hex = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, 'hex'));
export const toHex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
