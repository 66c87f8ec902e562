/**
 * The `X-Stamp` of a public-API request (reference/turnkey-api.md 1.2): P-256 ECDSA over
 * SHA-256 of the exact body bytes, DER hex, wrapped in `{publicKey, scheme, signature}` JSON and
 * base64url-encoded without padding.
 */
import { createECDH, createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { CountersignError } from '../shared/errors.js';
import { zeroize } from '../shared/encoding.js';

export const API_KEY_SCHEME = 'SIGNATURE_SCHEME_TK_API_P256';

const PUBLIC_KEY_RE = /^0[23][0-9a-f]{64}$/;
const PRIVATE_KEY_RE = /^[0-9a-f]{64}$/;

export interface ApiKeyStamperOptions {
  /** Compressed SEC1 P-256 public key, 33 bytes as 66 hex chars. */
  readonly apiPublicKey: string;
  /** The 32-byte P-256 scalar as 64 hex chars. */
  readonly apiPrivateKey: string;
}

/** Signs request bodies with one P-256 API key; the key object is built once. */
export class ApiKeyStamper {
  readonly publicKey: string;
  readonly #key: KeyObject;

  constructor(opts: ApiKeyStamperOptions) {
    const publicKey = opts.apiPublicKey.toLowerCase();
    if (!PUBLIC_KEY_RE.test(publicKey)) {
      throw new CountersignError(
        'CONFIG_INVALID',
        'apiPublicKey: must be a compressed P-256 public key (66 hex chars starting 02 or 03)',
        { field: 'apiPublicKey' },
      );
    }
    // The private key's text is never echoed into an error message.
    const privateHex = opts.apiPrivateKey.toLowerCase();
    if (!PRIVATE_KEY_RE.test(privateHex)) {
      throw new CountersignError(
        'CONFIG_INVALID',
        'apiPrivateKey: must be a 32-byte scalar as 64 hex chars',
        {
          field: 'apiPrivateKey',
        },
      );
    }
    const scalar = Buffer.from(privateHex, 'hex');
    try {
      const ecdh = createECDH('prime256v1');
      try {
        ecdh.setPrivateKey(scalar);
      } catch (cause) {
        throw new CountersignError('CONFIG_INVALID', 'apiPrivateKey: is not a valid P-256 scalar', {
          field: 'apiPrivateKey',
          cause,
        });
      }
      const compressed = ecdh.getPublicKey('hex', 'compressed');
      if (compressed !== publicKey) {
        throw new CountersignError('CONFIG_INVALID', 'apiPublicKey: does not belong to apiPrivateKey', {
          field: 'apiPublicKey',
        });
      }
      const point = ecdh.getPublicKey(null, 'uncompressed');
      this.#key = createPrivateKey({
        format: 'jwk',
        key: {
          kty: 'EC',
          crv: 'P-256',
          d: scalar.toString('base64url'),
          x: point.subarray(1, 33).toString('base64url'),
          y: point.subarray(33, 65).toString('base64url'),
        },
      });
    } finally {
      zeroize(scalar);
    }
    this.publicKey = publicKey;
  }

  /** The `X-Stamp` header value for exactly these body bytes. */
  stamp(body: Uint8Array): string {
    const signature = sign('sha256', body, { key: this.#key, dsaEncoding: 'der' }).toString('hex');
    const stamp = JSON.stringify({ publicKey: this.publicKey, scheme: API_KEY_SCHEME, signature });
    // Node's base64url alphabet has no padding, as Turnkey's stampers send it.
    return Buffer.from(stamp, 'utf8').toString('base64url');
  }
}
