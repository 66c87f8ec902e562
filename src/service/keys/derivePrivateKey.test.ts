import { HDKey } from '@scure/bip32';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createBase58check } from '@scure/base';
import vectors from '../../../test/vectors/keys/slip10.json' with { type: 'json' };
import leadingZeros from '../../../test/vectors/keys/bip32-leading-zeros.json' with { type: 'json' };
import { sha256 } from '../../shared/sha256.js';
import { bytesToHex, hexToBytes } from '../../shared/encoding.js';
import { CountersignError } from '../../shared/errors.js';
import { derivePrivateKey, isCurve, parseDerivationPath, publicKeyOf } from './index.js';

const hex = (s: string) => hexToBytes(s, 'vector');

describe('derivePrivateKey (BIP-32 / SLIP-10 vectors)', () => {
  for (const v of vectors.vectors) {
    const curve = v.curve;
    if (!isCurve(curve)) throw new Error(`bad curve in vector: ${curve}`);
    describe(v.name, () => {
      for (const c of v.chains) {
        it(`derives ${c.path}`, () => {
          const key = derivePrivateKey(hex(v.seed), curve, c.path, 'path');
          expect(bytesToHex(key)).toBe(c.private);
          // SLIP-10 writes ed25519 public keys as 00 ‖ key.
          const pub = curve === 'CURVE_ED25519' ? c.public.slice(2) : c.public;
          expect(bytesToHex(publicKeyOf(curve, key))).toBe(pub);
        });
      }
    });
  }
});

describe('derivePrivateKey (BIP-32 test vectors 3 and 4: leading zeros retained)', () => {
  // BIP-32 serialization: version 4, depth 1, fingerprint 4, child 4, chain code 32, key 33.
  const keyOf = (extended: string) => createBase58check(sha256).decode(extended).subarray(45);
  for (const v of leadingZeros.vectors) {
    for (const c of v.chains) {
      it(`${v.name}: derives ${c.path}`, () => {
        const path = c.path.replace(/H/g, "'");
        const key = derivePrivateKey(hex(v.seed), 'CURVE_SECP256K1', path, 'path');
        expect(bytesToHex(Uint8Array.of(0, ...key))).toBe(bytesToHex(keyOf(c.xprv)));
        expect(bytesToHex(publicKeyOf('CURVE_SECP256K1', key))).toBe(bytesToHex(keyOf(c.xpub)));
      });
    }
  }
});

describe('derivePrivateKey (secp256k1 against @scure/bip32)', () => {
  it('matches a second BIP-32 implementation on random seeds and paths', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 16, maxLength: 64 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 0x7fffffff }), fc.boolean()), { maxLength: 6 }),
        (seed, segs) => {
          const path = ['m', ...segs.map(([i, h]) => (h ? `${i}'` : `${i}`))].join('/');
          let ref = HDKey.fromMasterSeed(seed);
          for (const index of parseDerivationPath(path, 'path')) ref = ref.deriveChild(index);
          expect(bytesToHex(derivePrivateKey(seed, 'CURVE_SECP256K1', path, 'path'))).toBe(
            bytesToHex(ref.privateKey ?? new Uint8Array()),
          );
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('derivePrivateKey errors', () => {
  const seed = hex('000102030405060708090a0b0c0d0e0f');

  it('rejects a non-hardened ed25519 segment naming the field', () => {
    try {
      derivePrivateKey(seed, 'CURVE_ED25519', "m/44'/501'/0'/0", 'parameters.accounts[2].path');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(CountersignError);
      expect((e as CountersignError).code).toBe('FIELD_INVALID');
      expect((e as CountersignError).field).toBe('parameters.accounts[2].path');
      expect((e as CountersignError).message).toContain('segment 4');
    }
  });

  it('reports a malformed path against the field', () => {
    expect(() => derivePrivateKey(seed, 'CURVE_P256', 'm/x', 'acct.path')).toThrow(/acct\.path/);
  });

  it('rejects seeds outside 16..64 bytes', () => {
    for (const len of [0, 15, 65]) {
      expect(() => derivePrivateKey(new Uint8Array(len), 'CURVE_SECP256K1', 'm/0', 'p')).toThrow(
        expect.objectContaining({ code: 'KEY_MATERIAL_UNAVAILABLE' }),
      );
    }
  });

  it('accepts the h and apostrophe markers alike', () => {
    const a = derivePrivateKey(seed, 'CURVE_ED25519', "m/44'/501'/0'/0'", 'p');
    const b = derivePrivateKey(seed, 'CURVE_ED25519', 'm/44h/501H/0h/0H', 'p');
    expect(bytesToHex(a)).toBe(bytesToHex(b));
  });
});
