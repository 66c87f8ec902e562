import { sha256 } from '../../src/shared/sha256.js';

/** The Tron transaction id: sha256 of the exact `raw_data` bytes (also the digest that is signed). */
export function txId(rawData: Uint8Array): Uint8Array {
  return sha256(rawData);
}
