import { describe, expect, it } from 'vitest';
import { p256 } from '@noble/curves/nist.js';
import { formatHpkeBuf, hpkeDecrypt, hpkeEncrypt } from '@turnkey/crypto';
import vector from '../../../test/vectors/keys/hpke-rfc9180-a3.json' with { type: 'json' };
import { bytesToHex, hexToBytes, utf8 } from '../../shared/encoding.js';
import { CountersignError } from '../../shared/errors.js';
import {
  assertP256UncompressedPublicKey,
  hpkeSeal,
  openFromTurnkeySender,
  sealToTurnkeyTarget,
  setupBaseRecipient,
  setupBaseSender,
} from './hpke.js';

const hex = (h: string) => hexToBytes(h, 'vector');

describe('setupBaseSender', () => {
  it('matches RFC 9180 A.3.1 (DHKEM P-256, HKDF-SHA256, AES-128-GCM): KEM, key schedule and ciphertexts', () => {
    const ctx = setupBaseSender({
      recipientPublicKey: hex(vector.pkRm),
      info: hex(vector.info),
      aead: 'AES-128-GCM',
      ephemeralPrivateKey: hex(vector.skEm),
    });
    expect(bytesToHex(ctx.enc)).toBe(vector.enc);
    expect(bytesToHex(ctx.sharedSecret)).toBe(vector.sharedSecret);
    expect(bytesToHex(ctx.key)).toBe(vector.key);
    expect(bytesToHex(ctx.baseNonce)).toBe(vector.baseNonce);
    expect(bytesToHex(ctx.exporterSecret)).toBe(vector.exporterSecret);
    for (const e of vector.encryptions) {
      expect(bytesToHex(ctx.seal(hex(e.aad), hex(e.pt)))).toBe(e.ct);
    }
  });

  it('derives the same KEM shared secret under the AES-256-GCM suite (the KEM does not depend on the AEAD)', () => {
    const ctx = setupBaseSender({
      recipientPublicKey: hex(vector.pkRm),
      info: hex(vector.info),
      aead: 'AES-256-GCM',
      ephemeralPrivateKey: hex(vector.skEm),
    });
    expect(bytesToHex(ctx.sharedSecret)).toBe(vector.sharedSecret);
    expect(ctx.key).toHaveLength(32);
    expect(bytesToHex(ctx.key.subarray(0, 16))).not.toBe(vector.key);
  });

  it('zeroes its secrets on destroy', () => {
    const ctx = setupBaseSender({
      recipientPublicKey: hex(vector.pkRm),
      info: hex(vector.info),
      aead: 'AES-256-GCM',
      ephemeralPrivateKey: hex(vector.skEm),
    });
    ctx.destroy();
    for (const b of [ctx.sharedSecret, ctx.key, ctx.baseNonce, ctx.exporterSecret])
      expect(b.every((x) => x === 0)).toBe(true);
  });
});

describe('sealToTurnkeyTarget', () => {
  it("round-trips through @turnkey/crypto's own hpkeDecrypt (info turnkey_hpke, AAD enc ‖ pkR)", () => {
    const receiverPriv = p256.utils.randomSecretKey();
    const pkR = p256.getPublicKey(receiverPriv, false);
    for (const plaintext of [
      new Uint8Array(32).fill(7),
      utf8('abandon '.repeat(11) + 'about'),
      new Uint8Array(0),
    ]) {
      const sealed = sealToTurnkeyTarget({ targetPublicKey: pkR, plaintext });
      expect(sealed.encappedPublic).toHaveLength(65);
      expect(sealed.ciphertext).toHaveLength(plaintext.length + 16);
      const opened = hpkeDecrypt({
        ciphertextBuf: sealed.ciphertext,
        encappedKeyBuf: sealed.encappedPublic,
        receiverPriv: bytesToHex(receiverPriv),
      });
      expect(bytesToHex(opened)).toBe(bytesToHex(plaintext));
    }
  });

  it('uses a fresh ephemeral key for every seal', () => {
    const pkR = p256.getPublicKey(p256.utils.randomSecretKey(), false);
    const a = sealToTurnkeyTarget({ targetPublicKey: pkR, plaintext: utf8('x') });
    const b = sealToTurnkeyTarget({ targetPublicKey: pkR, plaintext: utf8('x') });
    expect(bytesToHex(a.encappedPublic)).not.toBe(bytesToHex(b.encappedPublic));
  });

  it('fails to open under another receiver key', () => {
    const pkR = p256.getPublicKey(p256.utils.randomSecretKey(), false);
    const sealed = sealToTurnkeyTarget({ targetPublicKey: pkR, plaintext: utf8('secret') });
    expect(() =>
      hpkeDecrypt({
        ciphertextBuf: sealed.ciphertext,
        encappedKeyBuf: sealed.encappedPublic,
        receiverPriv: bytesToHex(p256.utils.randomSecretKey()),
      }),
    ).toThrow();
  });
});

describe('hpkeSeal', () => {
  it('seals single-shot under a fresh ephemeral key, the tag appended', () => {
    const pkR = p256.getPublicKey(p256.utils.randomSecretKey(), false);
    const sealed = hpkeSeal({
      recipientPublicKey: pkR,
      plaintext: utf8('hi'),
      info: utf8('i'),
      aad: utf8('a'),
      aead: 'AES-256-GCM',
    });
    expect(sealed.ciphertext).toHaveLength(2 + 16);
  });
});

describe('assertP256UncompressedPublicKey', () => {
  const field = 'parameters.targetPublicKey';
  it.each([
    ['compressed', () => p256.getPublicKey(p256.utils.randomSecretKey(), true)],
    ['too short', () => new Uint8Array(64).fill(4)],
    ['not on the curve', () => Uint8Array.of(4, ...new Uint8Array(64).fill(1))],
  ])('refuses a %s key, naming the field', (_name, make) => {
    try {
      assertP256UncompressedPublicKey(make(), field);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(CountersignError);
      expect((e as CountersignError).code).toBe('FIELD_INVALID');
      expect((e as CountersignError).field).toBe(field);
    }
  });
});

describe('setupBaseRecipient', () => {
  it('matches RFC 9180 A.3.1 on the receiving side: shared secret, key schedule and plaintexts', () => {
    const ctx = setupBaseRecipient({
      enc: hex(vector.enc),
      recipientPrivateKey: hex(vector.skRm),
      info: hex(vector.info),
      aead: 'AES-128-GCM',
    });
    expect(bytesToHex(ctx.sharedSecret)).toBe(vector.sharedSecret);
    expect(bytesToHex(ctx.key)).toBe(vector.key);
    expect(bytesToHex(ctx.baseNonce)).toBe(vector.baseNonce);
    expect(bytesToHex(ctx.exporterSecret)).toBe(vector.exporterSecret);
    for (const e of vector.encryptions) {
      const pt = ctx.open(hex(e.aad), hex(e.ct));
      expect(pt === undefined ? undefined : bytesToHex(pt)).toBe(e.pt);
    }
  });

  it('returns undefined for a tampered ciphertext and does not advance the sequence', () => {
    const ctx = setupBaseRecipient({
      enc: hex(vector.enc),
      recipientPrivateKey: hex(vector.skRm),
      info: hex(vector.info),
      aead: 'AES-128-GCM',
    });
    const first = vector.encryptions[0]!;
    const bad = hex(first.ct);
    bad[0] = (bad[0] as number) ^ 1;
    expect(ctx.open(hex(first.aad), bad)).toBeUndefined();
    expect(ctx.open(hex(first.aad), new Uint8Array(3))).toBeUndefined();
    const pt = ctx.open(hex(first.aad), hex(first.ct));
    expect(pt === undefined ? undefined : bytesToHex(pt)).toBe(first.pt);
  });
});

describe('openFromTurnkeySender', () => {
  it("opens what @turnkey/crypto's own hpkeEncrypt sealed (the client side of an import)", () => {
    const skR = p256.utils.randomSecretKey();
    const pkR = p256.getPublicKey(skR, false);
    for (const plaintext of [new Uint8Array(32).fill(9), utf8('abandon '.repeat(11) + 'about')]) {
      const bundle = JSON.parse(
        formatHpkeBuf(hpkeEncrypt({ plainTextBuf: plaintext, targetKeyBuf: pkR })),
      ) as {
        encappedPublic: string;
        ciphertext: string;
      };
      const opened = openFromTurnkeySender({
        recipientPrivateKey: skR,
        encappedPublic: hex(bundle.encappedPublic),
        ciphertext: hex(bundle.ciphertext),
      });
      expect(opened === undefined ? undefined : bytesToHex(opened)).toBe(bytesToHex(plaintext));
    }
  });

  it('round-trips with sealToTurnkeyTarget and refuses another recipient key', () => {
    const skR = p256.utils.randomSecretKey();
    const sealed = sealToTurnkeyTarget({
      targetPublicKey: p256.getPublicKey(skR, false),
      plaintext: utf8('k'),
    });
    const input = { encappedPublic: sealed.encappedPublic, ciphertext: sealed.ciphertext };
    expect(openFromTurnkeySender({ ...input, recipientPrivateKey: skR })).toEqual(utf8('k'));
    expect(
      openFromTurnkeySender({ ...input, recipientPrivateKey: p256.utils.randomSecretKey() }),
    ).toBeUndefined();
  });

  it('refuses an encapsulated key that is not a P-256 point', () => {
    expect(() =>
      openFromTurnkeySender({
        recipientPrivateKey: p256.utils.randomSecretKey(),
        encappedPublic: Uint8Array.of(4, ...new Uint8Array(64).fill(1)),
        ciphertext: new Uint8Array(20),
      }),
    ).toThrow(CountersignError);
  });
});
