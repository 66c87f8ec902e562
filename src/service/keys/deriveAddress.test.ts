import { createHash } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { base58, bech32, bech32m } from '@scure/base';
import fc from 'fast-check';
import { privateKeyToAddress } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import vectors from '../../../test/vectors/keys/addresses.json' with { type: 'json' };
import { bytesTo0x, bytesToHex, hexToBytes } from '../../shared/encoding.js';
import { CountersignError } from '../../shared/errors.js';
import {
  deriveAddress,
  derivePrivateKey,
  generatePrivateKey,
  isAddressFormat,
  isCurve,
  mnemonicToSeed,
  publicKeyOf,
  type AddressFormat,
} from './index.js';

const seed = mnemonicToSeed(vectors.mnemonic);
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest();

function keyAt(path: string) {
  const priv = derivePrivateKey(seed, 'CURVE_SECP256K1', path, 'path');
  return { priv, pub: publicKeyOf('CURVE_SECP256K1', priv) };
}

describe('deriveAddress (well-known addresses of the BIP-39 test mnemonic)', () => {
  for (const v of vectors.valid) {
    it(`${v.name}: ${v.path} → ${v.address}`, () => {
      if (!isCurve(v.curve) || !isAddressFormat(v.format)) throw new Error('bad vector');
      const priv = derivePrivateKey(seed, v.curve, v.path, 'path');
      expect(deriveAddress(v.curve, publicKeyOf(v.curve, priv), v.format, 'f')).toBe(v.address);
    });
  }

  it('commits P2TR addresses to the BIP-86 output key of the internal key', () => {
    for (const v of vectors.valid) {
      if (v.outputKey === undefined) continue;
      const { pub } = keyAt(v.path);
      expect(bytesToHex(pub.subarray(1))).toBe(v.internalKey);
      const decoded = bech32m.decode(v.address as `${string}1${string}`);
      expect(decoded.words[0]).toBe(1);
      expect(bytesToHex(bech32m.fromWords(decoded.words.slice(1)))).toBe(v.outputKey);
    }
  });

  it('agrees with a second Tron computation (viem address, 0x41, node:crypto double SHA-256, base58)', () => {
    const tron = vectors.valid.find((v) => v.format === 'ADDRESS_FORMAT_TRON');
    if (tron === undefined) throw new Error('no Tron vector');
    const { priv, pub } = keyAt(tron.path);
    const payload = Buffer.concat([
      Buffer.from([0x41]),
      Buffer.from(privateKeyToAddress(bytesTo0x(priv)).slice(2), 'hex'),
    ]);
    const expected = base58.encode(Buffer.concat([payload, sha256(sha256(payload)).subarray(0, 4)]));
    expect(expected).toBe(tron.address);
    expect(deriveAddress('CURVE_SECP256K1', pub, 'ADDRESS_FORMAT_TRON', 'f')).toBe(expected);
  });
});

describe('deriveAddress (property checks against other implementations)', () => {
  it('gives viem’s EIP-55 address for any secp256k1 key', () => {
    fc.assert(
      fc.property(fc.integer(), () => {
        const k = generatePrivateKey('CURVE_SECP256K1');
        expect(
          deriveAddress('CURVE_SECP256K1', publicKeyOf('CURVE_SECP256K1', k), 'ADDRESS_FORMAT_ETHEREUM', 'f'),
        ).toBe(privateKeyToAddress(bytesTo0x(k)));
      }),
      { numRuns: 50 },
    );
  });

  it('accepts the 65-byte form of a key and gives the same addresses', () => {
    const { pub } = keyAt("m/44'/60'/0'/0/0");
    const full = secp256k1.Point.fromBytes(pub).toBytes(false);
    for (const f of [
      'ADDRESS_FORMAT_ETHEREUM',
      'ADDRESS_FORMAT_BITCOIN_MAINNET_P2TR',
      'ADDRESS_FORMAT_COMPRESSED',
    ] as const) {
      expect(deriveAddress('CURVE_SECP256K1', full, f, 'f')).toBe(
        deriveAddress('CURVE_SECP256K1', pub, f, 'f'),
      );
    }
    expect(deriveAddress('CURVE_SECP256K1', pub, 'ADDRESS_FORMAT_UNCOMPRESSED', 'f')).toBe(bytesToHex(full));
    expect(deriveAddress('CURVE_SECP256K1', pub, 'ADDRESS_FORMAT_COMPRESSED', 'f')).toBe(bytesToHex(pub));
  });

  it('uses the network prefixes and version bytes of mainnet, testnet and regtest', () => {
    const { pub } = keyAt("m/84'/1'/0'/0/0");
    const cases: [AddressFormat, RegExp][] = [
      ['ADDRESS_FORMAT_BITCOIN_MAINNET_P2PKH', /^1/],
      ['ADDRESS_FORMAT_BITCOIN_TESTNET_P2PKH', /^[mn]/],
      ['ADDRESS_FORMAT_BITCOIN_REGTEST_P2PKH', /^[mn]/],
      ['ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH', /^bc1q/],
      ['ADDRESS_FORMAT_BITCOIN_TESTNET_P2WPKH', /^tb1q/],
      ['ADDRESS_FORMAT_BITCOIN_REGTEST_P2WPKH', /^bcrt1q/],
      ['ADDRESS_FORMAT_BITCOIN_MAINNET_P2TR', /^bc1p/],
      ['ADDRESS_FORMAT_BITCOIN_TESTNET_P2TR', /^tb1p/],
      ['ADDRESS_FORMAT_BITCOIN_REGTEST_P2TR', /^bcrt1p/],
    ];
    for (const [f, re] of cases) expect(deriveAddress('CURVE_SECP256K1', pub, f, 'f')).toMatch(re);
    // Same program on every network; only the prefix differs.
    const programs = cases
      .filter(([f]) => f.endsWith('P2WPKH'))
      .map(([f]) =>
        bytesToHex(
          bech32.fromWords(
            bech32
              .decode(deriveAddress('CURVE_SECP256K1', pub, f, 'f') as `${string}1${string}`)
              .words.slice(1),
          ),
        ),
      );
    expect(new Set(programs).size).toBe(1);
  });

  it('gives hex public keys for P-256 and ed25519 COMPRESSED / UNCOMPRESSED', () => {
    const p = generatePrivateKey('CURVE_P256');
    const pp = publicKeyOf('CURVE_P256', p);
    expect(deriveAddress('CURVE_P256', pp, 'ADDRESS_FORMAT_COMPRESSED', 'f')).toBe(bytesToHex(pp));
    expect(deriveAddress('CURVE_P256', pp, 'ADDRESS_FORMAT_UNCOMPRESSED', 'f')).toMatch(/^04[0-9a-f]{128}$/);
    const e = publicKeyOf('CURVE_ED25519', generatePrivateKey('CURVE_ED25519'));
    expect(deriveAddress('CURVE_ED25519', e, 'ADDRESS_FORMAT_COMPRESSED', 'f')).toBe(bytesToHex(e));
  });
});

describe('deriveAddress errors', () => {
  const { pub } = keyAt("m/44'/60'/0'/0/0");

  it('rejects a format the curve cannot have with CURVE_UNSUPPORTED naming the field', () => {
    const e = publicKeyOf('CURVE_ED25519', generatePrivateKey('CURVE_ED25519'));
    for (const [curve, key, format] of [
      ['CURVE_ED25519', e, 'ADDRESS_FORMAT_ETHEREUM'],
      ['CURVE_ED25519', e, 'ADDRESS_FORMAT_UNCOMPRESSED'],
      ['CURVE_SECP256K1', pub, 'ADDRESS_FORMAT_SOLANA'],
      ['CURVE_P256', pub, 'ADDRESS_FORMAT_BITCOIN_MAINNET_P2TR'],
    ] as const) {
      expect(() => deriveAddress(curve, key, format, 'parameters.addressFormats[0]')).toThrow(
        expect.objectContaining({ code: 'CURVE_UNSUPPORTED', field: 'parameters.addressFormats[0]' }),
      );
    }
  });

  it('rejects malformed public keys with FIELD_INVALID', () => {
    const offCurve = hexToBytes(`02${'00'.repeat(31)}07`, 'v');
    for (const [curve, key] of [
      ['CURVE_SECP256K1', pub.subarray(1)],
      ['CURVE_SECP256K1', offCurve],
      ['CURVE_P256', new Uint8Array(33)],
      ['CURVE_ED25519', pub],
    ] as const) {
      expect(() => deriveAddress(curve, key, 'ADDRESS_FORMAT_COMPRESSED', 'k')).toThrow(
        expect.objectContaining({ code: 'FIELD_INVALID', field: 'k' }),
      );
    }
  });

  it('throws only CountersignError for arbitrary bytes', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 70 }),
        fc.constantFrom('CURVE_SECP256K1', 'CURVE_P256', 'CURVE_ED25519'),
        (b, c) => {
          try {
            deriveAddress(c, b, 'ADDRESS_FORMAT_COMPRESSED', 'k');
          } catch (e) {
            expect(e).toBeInstanceOf(CountersignError);
          }
        },
      ),
    );
  });
});
