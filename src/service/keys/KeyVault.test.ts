import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bytesToHex } from '../../shared/encoding.js';
import { CountersignError } from '../../shared/errors.js';
import { KeyVault } from './index.js';

const master = () => Uint8Array.from(randomBytes(32));
const unavailable = expect.objectContaining({ code: 'KEY_MATERIAL_UNAVAILABLE' });

describe('KeyVault', () => {
  const vault = new KeyVault(master());
  const secret = Uint8Array.from(randomBytes(64));

  it('round-trips any plaintext and record id', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.string(), (pt, id) => {
        expect(bytesToHex(vault.open(vault.seal(pt, id), id))).toBe(bytesToHex(pt));
      }),
    );
  });

  it('writes version 1 and a fresh DEK and IV each time', () => {
    const a = vault.seal(secret, 'wallet-1');
    const b = vault.seal(secret, 'wallet-1');
    expect(a[0]).toBe(1);
    // version + wrapped DEK (12 + 32 + 16) + iv (12) + ct + tag (16)
    expect(a).toHaveLength(1 + 60 + 12 + secret.length + 16);
    expect(bytesToHex(a)).not.toBe(bytesToHex(b));
  });

  it('does not contain the plaintext', () => {
    const sealed = Buffer.from(vault.seal(secret, 'wallet-1'));
    expect(sealed.indexOf(Buffer.from(secret))).toBe(-1);
    expect(sealed.indexOf(Buffer.from(secret.subarray(0, 8)))).toBe(-1);
  });

  it('fails on a change to any single byte', () => {
    const sealed = vault.seal(secret, 'wallet-1');
    for (let i = 0; i < sealed.length; i++) {
      const t = sealed.slice();
      t[i] = (t[i] as number) ^ 0x01;
      expect(() => vault.open(t, 'wallet-1')).toThrow(unavailable);
    }
  });

  it('fails when truncated or extended', () => {
    const sealed = vault.seal(secret, 'wallet-1');
    for (const t of [sealed.subarray(0, sealed.length - 1), sealed.subarray(0, 10), new Uint8Array(0)]) {
      expect(() => vault.open(t, 'wallet-1')).toThrow(unavailable);
    }
    expect(() => vault.open(new Uint8Array([...sealed, 0]), 'wallet-1')).toThrow(unavailable);
  });

  it('fails under another record id, so rows cannot be swapped', () => {
    const sealed = vault.seal(secret, 'wallet-1');
    for (const id of ['wallet-2', 'wallet-1 ', 'Wallet-1', '']) {
      expect(() => vault.open(sealed, id)).toThrow(unavailable);
    }
  });

  it('fails under another master key', () => {
    const sealed = vault.seal(secret, 'wallet-1');
    expect(() => new KeyVault(master()).open(sealed, 'wallet-1')).toThrow(unavailable);
  });

  it('copies the master key', () => {
    const key = master();
    const v = new KeyVault(key);
    const sealed = v.seal(secret, 'r');
    key.fill(0);
    expect(bytesToHex(v.open(sealed, 'r'))).toBe(bytesToHex(secret));
  });

  it('rejects a master key that is not 32 bytes', () => {
    expect(() => new KeyVault(new Uint8Array(16))).toThrow(CountersignError);
  });
});
