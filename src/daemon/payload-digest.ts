/**
 * The digest the public API will sign for one raw payload (reference/turnkey-api.md 6.1),
 * computed locally so that the returned signature can be checked before it is released.
 */
import { createHash } from 'node:crypto';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { hashAuthorization, hashTypedDataJson, parseAuthorizationJson } from '../../chains/ethereum/index.js';
import { hexToBytes, utf8 } from '../shared/encoding.js';
import { CountersignError, invalid } from '../shared/errors.js';
import type { HashFunction, PayloadEncoding } from './proto.js';

export type KnownEncoding = Exclude<PayloadEncoding, 'PAYLOAD_ENCODING_UNSPECIFIED'>;
export type KnownHashFunction = Exclude<HashFunction, 'HASH_FUNCTION_UNSPECIFIED'>;

/** The 32-byte digest of `payload` under the encoding and hash function; throws naming `field`. */
export function payloadDigest(
  payload: string,
  encoding: KnownEncoding,
  hashFunction: KnownHashFunction,
  field: string,
): Uint8Array {
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
      // ed25519 signs the message itself; the daemon verifies secp256k1 signatures only so far.
      throw new CountersignError(
        'HASH_FUNCTION_INVALID',
        'hash_function: HASH_FUNCTION_NOT_APPLICABLE (ed25519) signatures cannot be verified by the daemon yet',
        { field: 'hash_function' },
      );
    default: {
      const never: never = hashFunction;
      throw invalid('hash_function', `unknown hash function ${String(never)}`);
    }
  }
}
