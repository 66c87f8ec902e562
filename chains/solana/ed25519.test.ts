import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { hex } from '../../test/vectors/solana/keys.js';
import { verifyEd25519 } from './ed25519.js';

interface Case {
  name: string;
  publicKey: string;
  message: string;
  signature: string;
}
const vectors = JSON.parse(
  readFileSync(new URL('../../test/vectors/solana/rfc8032.json', import.meta.url), 'utf8'),
) as { valid: Case[]; invalid: Case[] };

describe('verifyEd25519', () => {
  it.each(vectors.valid)('accepts RFC 8032 §7.1 $name', (v) => {
    expect(verifyEd25519(hex(v.signature), hex(v.message), hex(v.publicKey))).toBe(true);
  });

  it.each(vectors.invalid)('rejects $name', (v) => {
    expect(verifyEd25519(hex(v.signature), hex(v.message), hex(v.publicKey))).toBe(false);
  });

  it('rejects wrong lengths and a key that is not a curve point instead of throwing', () => {
    const v = vectors.valid[0]!;
    expect(verifyEd25519(hex(v.signature).subarray(1), hex(v.message), hex(v.publicKey))).toBe(false);
    expect(verifyEd25519(hex(v.signature), hex(v.message), hex(v.publicKey).subarray(1))).toBe(false);
    expect(verifyEd25519(hex(v.signature), hex(v.message), new Uint8Array(32).fill(0xff))).toBe(false);
  });

  it('rejects a signature whose S is not reduced (S + L)', () => {
    const v = vectors.valid[0]!;
    const sig = hex(v.signature);
    const L = 2n ** 252n + 27742317777372353535851937790883648493n;
    const s = BigInt(`0x${Buffer.from(sig.subarray(32)).reverse().toString('hex')}`) + L;
    const sPlusL = Buffer.from(s.toString(16).padStart(64, '0'), 'hex').reverse();
    const malleable = Uint8Array.from([...sig.subarray(0, 32), ...sPlusL]);
    expect(verifyEd25519(malleable, hex(v.message), hex(v.publicKey))).toBe(false);
  });
});
