import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { describe, expect, it } from 'vitest';
import { bytesToHex as hex } from './encoding.js';
import { sha256 } from './sha256.js';

describe('sha256', () => {
  it('answers the FIPS 180-2 vectors', () => {
    expect(hex(sha256(new Uint8Array(0)))).toBe(
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
    expect(hex(sha256(new TextEncoder().encode('abc')))).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  it('agrees with @noble/hashes on views of every length up to three blocks', () => {
    const backing = Uint8Array.from({ length: 300 }, (_, i) => (i * 37 + 11) & 0xff);
    for (let len = 0; len <= 193; len++) {
      const view = backing.subarray(5, 5 + len);
      expect(hex(sha256(view))).toBe(hex(nobleSha256(view)));
    }
  });
});
