import { keccak_256 } from '../../src/shared/keccak.js';
import { BoundedMemo } from '../../src/shared/boundedMemo.js';
import { recoverPublicKey } from '../../src/shared/secp256k1.js';
import { toChecksumAddress } from './toChecksumAddress.js';

/**
 * Addresses of public keys already recovered, by the 65-byte key as hex: a daemon verifies the
 * same few signers over and over, and each address costs a keccak. Only the key → address step is
 * remembered; the recovery itself, which is the verification, runs every time.
 */
const MEMO = new BoundedMemo<string, string>(1024);

/** The memo's fill and bound (for tests). */
export const recoveredAddressMemo: { readonly size: number; readonly limit: number } = MEMO;

/**
 * Recovers the EIP-55 signer address of a 32-byte digest with the native libsecp256k1; undefined
 * when the signature is invalid or high-S (EIP-2). r and s are big-endian, at most 32 bytes.
 */
export function recoverAddress(
  digest: Uint8Array,
  r: Uint8Array,
  s: Uint8Array,
  yParity: number,
): string | undefined {
  if (r.length > 32 || s.length > 32) return undefined;
  const compact = new Uint8Array(64);
  compact.set(r, 32 - r.length);
  compact.set(s, 64 - s.length);
  const pub = recoverPublicKey(digest, compact, yParity, false);
  if (pub === undefined || pub.length !== 65) return undefined;
  const id = Buffer.from(pub.buffer, pub.byteOffset, 65).toString('hex');
  const known = MEMO.get(id);
  if (known !== undefined) return known;
  // Ethereum address: the last 20 bytes of keccak256(x ‖ y).
  const address = toChecksumAddress(keccak_256(pub.subarray(1)).subarray(12));
  MEMO.set(id, address);
  return address;
}
