import { keccak_256 } from '@noble/hashes/sha3.js';

/** EIP-191 version 0x45 ("personal_sign") digest: keccak256("\x19Ethereum Signed Message:\n" ‖ len ‖ message). */
export function hashPersonalMessage(message: Uint8Array): Uint8Array {
  const prefix = Buffer.from(`\x19Ethereum Signed Message:\n${message.length}`, 'latin1');
  return keccak_256.create().update(prefix).update(message).digest();
}
