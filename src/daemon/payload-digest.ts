/**
 * The digest the public API will sign for one raw payload (reference/turnkey-api.md 6.1),
 * computed locally so that the returned signature can be checked before it is released. For an
 * ed25519 signer there is no digest: the "digest" is the decoded message itself (RFC 8032).
 */
import { createHash } from 'node:crypto';
import { keccak_256 } from '../shared/keccak.js';
import { hashAuthorization, hashTypedDataJson, parseAuthorizationJson } from '../../chains/ethereum/index.js';
import { hexToBytes, utf8 } from '../shared/encoding.js';
import { CountersignError, invalid } from '../shared/errors.js';
import type { HashFunction, PayloadEncoding } from './proto.js';
import type { RawSignatureScheme } from './verify-signature.js';

export type KnownEncoding = Exclude<PayloadEncoding, 'PAYLOAD_ENCODING_UNSPECIFIED'>;
export type KnownHashFunction = Exclude<HashFunction, 'HASH_FUNCTION_UNSPECIFIED'>;

/**
 * ECDSA_SECP256K1 (default): the 32-byte digest of `payload` under the encoding and hash function.
 * ED25519 (a Solana `sign_with`): the decoded payload bytes, which the key signs as they are; only
 * HASH_FUNCTION_NOT_APPLICABLE with a hex or UTF-8 payload is accepted. Throws naming `field`.
 */
export function payloadDigest(
  payload: string,
  encoding: KnownEncoding,
  hashFunction: KnownHashFunction,
  field: string,
  scheme: RawSignatureScheme = 'ECDSA_SECP256K1',
): Uint8Array {
  if (scheme === 'ED25519') return ed25519Message(payload, encoding, hashFunction, field);
  switch (encoding) {
    // EIP-712 and EIP-7702 fix their own hashing; the hash function is ignored as the API does.
    case 'PAYLOAD_ENCODING_EIP712':
      return hashTypedDataJson(payload, field);
    case 'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION':
      return hashAuthorization(parseAuthorizationJson(payload, field));
    case 'PAYLOAD_ENCODING_HEXADECIMAL':
      return hashed(hexToBytes(payload, field), hashFunction, field);
    case 'PAYLOAD_ENCODING_TEXT_UTF8':
      return hashed(utf8(payload), hashFunction, field);
    default: {
      const never: never = encoding;
      throw invalid('encoding', `unknown encoding ${String(never)}`);
    }
  }
}

function hashed(bytes: Uint8Array, hashFunction: KnownHashFunction, field: string): Uint8Array {
  switch (hashFunction) {
    case 'HASH_FUNCTION_NO_OP':
      if (bytes.length !== 32) {
        throw new CountersignError(
          'PAYLOAD_INVALID',
          `${field}: with HASH_FUNCTION_NO_OP must be 32 bytes, got ${bytes.length}`,
          {
            field,
          },
        );
      }
      return bytes;
    case 'HASH_FUNCTION_SHA256':
      return new Uint8Array(createHash('sha256').update(bytes).digest());
    case 'HASH_FUNCTION_KECCAK256':
      return keccak_256(bytes);
    case 'HASH_FUNCTION_NOT_APPLICABLE':
      // The public API refuses it for secp256k1 keys too; say so before anything is submitted.
      throw new CountersignError(
        'HASH_FUNCTION_INVALID',
        'hash_function: HASH_FUNCTION_NOT_APPLICABLE is for ed25519 keys (a Solana address in sign_with); a secp256k1 key signs a digest',
        { field: 'hash_function' },
      );
    default: {
      const never: never = hashFunction;
      throw invalid('hash_function', `unknown hash function ${String(never)}`);
    }
  }
}

/** The message an ed25519 key signs for one payload: the decoded bytes, never a hash of them. */
function ed25519Message(
  payload: string,
  encoding: KnownEncoding,
  hashFunction: KnownHashFunction,
  field: string,
): Uint8Array {
  if (hashFunction !== 'HASH_FUNCTION_NOT_APPLICABLE') {
    throw new CountersignError(
      'HASH_FUNCTION_INVALID',
      `hash_function: ed25519 keys sign the payload itself (RFC 8032); use HASH_FUNCTION_NOT_APPLICABLE, not ${hashFunction}`,
      { field: 'hash_function' },
    );
  }
  switch (encoding) {
    case 'PAYLOAD_ENCODING_HEXADECIMAL':
      return hexToBytes(payload, field);
    case 'PAYLOAD_ENCODING_TEXT_UTF8':
      return utf8(payload);
    case 'PAYLOAD_ENCODING_EIP712':
    case 'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION':
      throw invalid('encoding', `${encoding} needs a secp256k1 key, not ed25519`, 'PAYLOAD_INVALID');
    default: {
      const never: never = encoding;
      throw invalid('encoding', `unknown encoding ${String(never)}`);
    }
  }
}
