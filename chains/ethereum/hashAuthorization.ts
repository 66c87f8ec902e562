import { keccak_256 } from '../../src/shared/keccak.js';
import { encodeRlp, uintToBytes } from './rlp.js';

/** EIP-7702 magic byte that domain-separates authorization digests. */
const MAGIC = 0x05;

/** EIP-7702 authorization digest: keccak256(0x05 ‖ rlp([chainId, address, nonce])). */
export function hashAuthorization(a: { chainId: bigint; address: Uint8Array; nonce: bigint }): Uint8Array {
  return keccak_256(encodeRlp([uintToBytes(a.chainId), a.address, uintToBytes(a.nonce)], MAGIC));
}
