import { describe, expect, it } from 'vitest';
import { p256 } from '@noble/curves/nist.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { verifyOtpVerificationToken, verifySessionJwtSignature } from '@turnkey/crypto';
import { bytesToHex, utf8 } from '../../shared/encoding.js';
import { CountersignError } from '../../shared/errors.js';
import { KeyVault } from './KeyVault.js';
import { generateServiceKey } from './serviceKey.js';
import {
  signSessionJwt,
  signVerificationToken,
  verifyClientSignature,
  verifySessionJwt,
  verifyVerificationToken,
} from './jwt.js';

const vault = new KeyVault(new Uint8Array(32).fill(7));
const key = generateServiceKey(vault, 'jwt-test');
const NOW = 1_750_000_000_000;
const clientKey = p256.utils.randomSecretKey();
const clientPub = bytesToHex(p256.getPublicKey(clientKey, true));

const session = () =>
  signSessionJwt({
    vault,
    key,
    claims: {
      exp: Math.floor(NOW / 1000) + 900,
      public_key: clientPub,
      session_type: 'SESSION_TYPE_READ_WRITE',
      user_id: 'u-1',
      organization_id: 'o-1',
    },
  });

const token = (exp = String(NOW + 60_000)) =>
  signVerificationToken({
    vault,
    key,
    claims: {
      id: 'f0f0f0f0-0000-4000-8000-000000000001',
      verification_type: 'OTP_TYPE_EMAIL',
      contact: 'a@example.com',
      organization_id: 'o-1',
      public_key: clientPub,
      exp,
    },
  });

function fieldError(fn: () => unknown): CountersignError {
  try {
    fn();
  } catch (e) {
    if (e instanceof CountersignError) return e;
    throw e;
  }
  throw new Error('expected a CountersignError');
}

describe('signSessionJwt', () => {
  it('is accepted by @turnkey/crypto verifySessionJwtSignature given our key, and by nothing else', async () => {
    const jwt = session();
    expect(await verifySessionJwtSignature(jwt, key.publicKey)).toBe(true);
    const other = generateServiceKey(vault, 'other');
    expect(await verifySessionJwtSignature(jwt, other.publicKey)).toBe(false);
  });

  it('carries the ES256 header and the five claims @turnkey/core requires, exp in seconds', () => {
    const [h, p] = session().split('.') as [string, string];
    expect(JSON.parse(Buffer.from(h, 'base64url').toString())).toEqual({ alg: 'ES256', typ: 'JWT' });
    expect(JSON.parse(Buffer.from(p, 'base64url').toString())).toEqual({
      exp: Math.floor(NOW / 1000) + 900,
      public_key: clientPub,
      session_type: 'SESSION_TYPE_READ_WRITE',
      user_id: 'u-1',
      organization_id: 'o-1',
    });
  });

  it('signs the double SHA-256 of header.payload (not the single hash of standard ES256)', () => {
    const [h, p, s] = session().split('.') as [string, string, string];
    const sig = new Uint8Array(Buffer.from(s, 'base64url'));
    const pub = Buffer.from(key.publicKey, 'hex');
    const once = sha256(utf8(`${h}.${p}`));
    expect(p256.verify(sig, sha256(once), pub, { prehash: false })).toBe(true);
    expect(p256.verify(sig, once, pub, { prehash: false })).toBe(false);
  });

  it('round-trips through verifySessionJwt and refuses a changed payload', () => {
    const jwt = session();
    expect(verifySessionJwt({ token: jwt, signerPublicKey: key.publicKey, field: 's' }).user_id).toBe('u-1');
    const [h, , s] = jwt.split('.') as [string, string, string];
    const forged = Buffer.from(JSON.stringify({ user_id: 'root' })).toString('base64url');
    expect(
      fieldError(() =>
        verifySessionJwt({ token: `${h}.${forged}.${s}`, signerPublicKey: key.publicKey, field: 's' }),
      ).field,
    ).toBe('s');
  });
});

describe('verification tokens', () => {
  it('are standard ES256 JWTs @turnkey/crypto verifyOtpVerificationToken accepts given our key', async () => {
    // @turnkey/crypto checks expiry against the real clock.
    const t = token(String(Date.now() + 60_000));
    const claims = await verifyOtpVerificationToken(t, key.publicKey);
    expect(claims.contact).toBe('a@example.com');
  });

  it('verifyVerificationToken returns the claims of a valid token', () => {
    const c = verifyVerificationToken({
      token: token(),
      signerPublicKey: key.publicKey,
      nowMs: NOW,
      field: 'v',
    });
    expect(c).toMatchObject({
      verification_type: 'OTP_TYPE_EMAIL',
      public_key: clientPub,
      organization_id: 'o-1',
    });
  });

  it('verifyVerificationToken accepts an empty public_key (a token issued without a client key)', () => {
    const t = signVerificationToken({
      vault,
      key,
      claims: {
        id: 'x',
        verification_type: 'OTP_TYPE_SMS',
        contact: '+15555550100',
        organization_id: 'o',
        public_key: '',
        exp: String(NOW + 1000),
      },
    });
    const c = verifyVerificationToken({ token: t, signerPublicKey: key.publicKey, nowMs: NOW, field: 'v' });
    expect(c.public_key).toBe('');
  });

  it.each([
    ['an expired token', () => token(String(NOW - 1)), /expired/],
    [
      'a token signed by another key',
      () => {
        const other = generateServiceKey(vault, 'other-2');
        return signVerificationToken({
          vault,
          key: other,
          claims: {
            id: 'x',
            verification_type: 'OTP_TYPE_EMAIL',
            contact: 'c',
            organization_id: 'o',
            public_key: clientPub,
            exp: String(NOW + 1000),
          },
        });
      },
      /not signed by this service/,
    ],
    [
      'alg none',
      () => {
        const [, p, s] = token().split('.') as [string, string, string];
        return `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${p}.${s}`;
      },
      /header/,
    ],
    ['not a JWT', () => 'abc', /not a JWT/],
    [
      'a changed claim',
      () => {
        const [h, p, s] = token().split('.') as [string, string, string];
        const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, string>;
        claims.contact = 'b@example.com';
        return `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`;
      },
      /not signed by this service/,
    ],
  ])('refuses %s, naming the field', (_name, make, message) => {
    const e = fieldError(() =>
      verifyVerificationToken({
        token: make(),
        signerPublicKey: key.publicKey,
        nowMs: NOW,
        field: 'parameters.verificationToken',
      }),
    );
    expect(e.code).toBe('FIELD_INVALID');
    expect(e.field).toBe('parameters.verificationToken');
    expect(e.message).toMatch(message);
  });
});

describe('verifyClientSignature', () => {
  const message = JSON.stringify({
    signupV2: { email: 'a@example.com' },
    tokenId: 't',
    type: 'USAGE_TYPE_SIGNUP',
  });
  const signature = bytesToHex(p256.sign(utf8(message), clientKey, { format: 'compact' }));

  it('accepts raw r‖s hex over SHA-256(message) by the compressed key', () => {
    expect(verifyClientSignature({ publicKey: clientPub, message, signature })).toBe(true);
  });

  it('refuses another message, another key, DER and malformed input', () => {
    expect(verifyClientSignature({ publicKey: clientPub, message: `${message} `, signature })).toBe(false);
    const otherPub = bytesToHex(p256.getPublicKey(p256.utils.randomSecretKey(), true));
    expect(verifyClientSignature({ publicKey: otherPub, message, signature })).toBe(false);
    const der = bytesToHex(p256.sign(utf8(message), clientKey, { format: 'der' }));
    expect(verifyClientSignature({ publicKey: clientPub, message, signature: der })).toBe(false);
    expect(verifyClientSignature({ publicKey: 'zz', message, signature })).toBe(false);
  });
});
