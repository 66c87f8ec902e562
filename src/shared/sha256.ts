import { hash } from 'node:crypto';

/**
 * SHA-256 by OpenSSL (node:crypto's one-shot `hash`): a few times faster than @noble/hashes on short
 * inputs, and about half the cost of createHash().update().digest(), which builds a Hash object the
 * garbage collector then has to free.
 */
export function sha256(data: Uint8Array): Uint8Array {
  const d = hash('sha256', data, 'buffer');
  return new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
}
