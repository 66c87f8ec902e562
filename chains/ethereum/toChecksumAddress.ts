import { keccak_256 } from '../../src/shared/keccak.js';
import { BoundedMemo } from '../../src/shared/boundedMemo.js';
import { CountersignError } from '../../src/shared/errors.js';

/**
 * Checksummed forms already computed, by lower-case hex: the same few signers are checksummed on
 * every request (sign_with, the recovered signer), each costing a keccak. Addresses are public.
 */
const MEMO = new BoundedMemo<string, string>(4096);

/** The memo's fill and bound (for tests). */
export const checksumMemo: { readonly size: number; readonly limit: number } = MEMO;

/** EIP-55 mixed-case checksum encoding of a 20-byte address, `0x`-prefixed. */
export function toChecksumAddress(addr20: Uint8Array): string {
  if (addr20.length !== 20)
    throw new CountersignError('INTERNAL', `address must be 20 bytes, got ${addr20.length}`);
  const lower = Buffer.from(addr20.buffer, addr20.byteOffset, 20).toString('hex');
  const known = MEMO.get(lower);
  if (known !== undefined) return known;
  const hash = keccak_256(Buffer.from(lower, 'latin1'));
  let out = '0x';
  for (let i = 0; i < 40; i++) {
    const c = lower.charCodeAt(i);
    // EIP-55: upper-case a letter when the matching nibble of keccak(lower-case hex) is ≥ 8.
    const nibble = i % 2 === 0 ? (hash[i >> 1] as number) >> 4 : (hash[i >> 1] as number) & 0x0f;
    out += c >= 0x61 && nibble >= 8 ? String.fromCharCode(c - 0x20) : lower[i];
  }
  MEMO.set(lower, out);
  return out;
}
