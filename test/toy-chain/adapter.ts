/**
 * A toy sixth chain, only for the test that proves the seam: unsigned bytes are "TOY" + a payload,
 * the digest is their SHA-256 signed with secp256k1, the signed bytes append r ‖ s ‖ v, and the
 * signer is the Ethereum address the signature recovers to. Nothing outside this folder and the
 * registry call of its test knows it exists.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { addressFromPublicKey } from '../../chains/ethereum/index.js';
import type { ChainAdapter } from '../../chains/types.js';
import { CountersignError, invalid } from '../../src/shared/errors.js';
import { recoverPublicKey } from '../../src/shared/secp256k1.js';

const MAGIC = new TextEncoder().encode('TOY');

export interface ToyTransaction {
  readonly payload: Uint8Array;
}

export interface ToyFields {
  readonly payload: Uint8Array;
}

function encode(payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(MAGIC.length + payload.length);
  out.set(MAGIC);
  out.set(payload, MAGIC.length);
  return out;
}

function failed(why: string): CountersignError {
  return new CountersignError('SIGNATURE_VERIFICATION_FAILED', `toy signature verification failed: ${why}`);
}

export const toyAdapter: ChainAdapter<ToyTransaction, ToyFields, string> = {
  serialize: (fields) => encode(fields.payload),
  parse: (bytes) => {
    if (bytes.length <= MAGIC.length || MAGIC.some((b, i) => bytes[i] !== b))
      throw invalid('unsigned', 'is not a toy transaction ("TOY" and a payload)', 'FIELD_INVALID');
    return { payload: bytes.slice(MAGIC.length) };
  },
  describe: (tx, signer) => ({ from: signer.toLowerCase(), payload_length: tx.payload.length }),
  digests: (tx) => [{ scheme: 'ECDSA_SECP256K1', payload: sha256(encode(tx.payload)) }],
  assemble: (tx, signatures) => {
    const [sig, ...rest] = signatures;
    if (sig === undefined || rest.length > 0) throw new CountersignError('INTERNAL', 'one signature');
    const unsigned = encode(tx.payload);
    const out = new Uint8Array(unsigned.length + 65);
    out.set(unsigned);
    out.set(sig.r, unsigned.length);
    out.set(sig.s, unsigned.length + 32);
    out[unsigned.length + 64] = sig.v;
    return out;
  },
  verify: (signed, unsigned, signer) => {
    if (signed.length !== unsigned.length + 65) throw failed('wrong length');
    if (!unsigned.every((b, i) => signed[i] === b)) throw failed('the body differs from what was sent');
    const r = signed.slice(unsigned.length, unsigned.length + 32);
    const s = signed.slice(unsigned.length + 32, unsigned.length + 64);
    const v = signed[unsigned.length + 64]!;
    const compact = new Uint8Array(64);
    compact.set(r);
    compact.set(s, 32);
    const key = recoverPublicKey(sha256(unsigned), compact, v);
    const recovered = key === undefined ? undefined : addressFromPublicKey(key);
    if (recovered === undefined || recovered.toLowerCase() !== signer.toLowerCase())
      throw failed('the signature does not recover to the signer');
    return { hash: sha256(signed), signer: recovered, signatures: [{ r, s, v }] };
  },
};
