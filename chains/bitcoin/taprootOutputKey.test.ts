import { schnorr, secp256k1 } from '@noble/curves/secp256k1.js';
import { describe, expect, it } from 'vitest';
import { bytesToBigint } from '../../src/shared/encoding.js';
import { publicKeyOf, taprootTweakSeckey } from '../../src/shared/secp256k1.js';
import { taprootOutputKey } from './taprootOutputKey.js';

const { Point } = secp256k1;

/** BIP-341 taproot_tweak_pubkey with an empty tree, in @noble/curves arithmetic: the second implementation. */
function nobleOutputKey(x: Uint8Array): Uint8Array {
  const t = bytesToBigint(schnorr.utils.taggedHash('TapTweak', x));
  return Point.fromBytes(Uint8Array.of(2, ...x))
    .add(Point.BASE.multiply(t))
    .toBytes(true)
    .slice(1);
}

describe('taprootOutputKey (libsecp256k1)', () => {
  it('equals the BIP-86 vector: account 0 receive 0 of the BIP-86 test mnemonic', () => {
    // BIP-86 test vectors, m/86'/0'/0'/0/0: internal key and output key.
    const internal = Buffer.from('cc8a4bc64d897bddc5fbc2f670f7a8ba0b386779106cf1223c6fc5d7cd6fc115', 'hex');
    expect(Buffer.from(taprootOutputKey(internal)).toString('hex')).toBe(
      'a60869f0dbcf1dc659c9cecbaf8050135ea9e8cdc487053f1dc6880949dc684c',
    );
  });

  it('agrees with @noble/curves for many keys, and the tweaked secret key signs for it', () => {
    for (let i = 1; i <= 40; i++) {
      const seckey = new Uint8Array(32).fill(i);
      seckey[0] = 0x11;
      const pub = publicKeyOf(seckey, true);
      const q = taprootOutputKey(pub);
      expect(q).toEqual(nobleOutputKey(pub.subarray(1)));
      const tweaked = taprootTweakSeckey(seckey) as Uint8Array;
      const msg = new Uint8Array(32).fill(i);
      expect(schnorr.verify(schnorr.sign(msg, tweaked), msg, q)).toBe(true);
    }
  });

  it('refuses an x coordinate not on the curve, naming the field', () => {
    // x = 5 has no point on secp256k1 (5³ + 7 = 132 is not a square mod p).
    const x = new Uint8Array(32);
    x[31] = 5;
    expect(() => taprootOutputKey(x, 'sign_with')).toThrow(/sign_with/);
  });
});
