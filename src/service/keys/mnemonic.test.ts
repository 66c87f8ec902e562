import { pbkdf2Sync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import vectors from '../../../test/vectors/keys/bip39.json' with { type: 'json' };
import { bytesToHex } from '../../shared/encoding.js';
import { CountersignError } from '../../shared/errors.js';
import { generateMnemonic, mnemonicToSeed, validateMnemonic } from './index.js';

describe('mnemonicToSeed', () => {
  for (const v of vectors.valid) {
    it(`derives the BIP-39 seed of "${v.mnemonic.slice(0, 30)}…" with passphrase "${v.passphrase}"`, () => {
      expect(bytesToHex(mnemonicToSeed(v.mnemonic, v.passphrase))).toBe(v.seed);
    });
  }

  it('uses the empty passphrase by default', () => {
    const v = vectors.valid.find((x) => x.passphrase === '');
    expect(v).toBeDefined();
    expect(bytesToHex(mnemonicToSeed(v?.mnemonic ?? ''))).toBe(v?.seed);
  });

  it('equals PBKDF2-HMAC-SHA512(mnemonic, "mnemonic" ‖ passphrase, 2048) computed by node:crypto', () => {
    for (let i = 0; i < 5; i++) {
      const m = generateMnemonic(12);
      const pass = `pässwörd-${i}`;
      const expected = pbkdf2Sync(
        m.normalize('NFKD'),
        `mnemonic${pass}`.normalize('NFKD'),
        2048,
        64,
        'sha512',
      );
      expect(bytesToHex(mnemonicToSeed(m, pass))).toBe(expected.toString('hex'));
    }
  });
});

describe('validateMnemonic', () => {
  it('accepts the reference mnemonics', () => {
    for (const v of vectors.valid) expect(validateMnemonic(v.mnemonic)).toBe(true);
  });
  it('rejects a bad checksum, wrong length, unknown words and non-strings', () => {
    for (const m of vectors.invalid) expect(validateMnemonic(m)).toBe(false);
    expect(validateMnemonic(42 as unknown as string)).toBe(false);
  });
});

describe('generateMnemonic', () => {
  for (const words of [12, 15, 18, 21, 24] as const) {
    it(`makes a valid ${words}-word mnemonic`, () => {
      const m = generateMnemonic(words);
      expect(m.split(' ')).toHaveLength(words);
      expect(validateMnemonic(m)).toBe(true);
      expect(generateMnemonic(words)).not.toBe(m);
    });
  }
  it('rejects other lengths', () => {
    expect(() => generateMnemonic(13 as 12)).toThrow(CountersignError);
  });
});
