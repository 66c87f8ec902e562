import { sha256 } from '../../src/shared/sha256.js';
import { serializeTransaction } from './serializeTransaction.js';
import type { BitcoinTransaction } from './types.js';

/** Double SHA-256 in internal byte order (how txids sit inside transactions). */
export function hash256(data: Uint8Array): Uint8Array {
  return sha256(sha256(data));
}

/** The transaction id in internal byte order: hash256 of the legacy (witness-stripped) serialization. */
export function txidInternal(tx: BitcoinTransaction): Uint8Array {
  return hash256(serializeTransaction(tx, { witness: false }));
}

/** The transaction id in display order (reversed; what bitcoind, explorers and bitcoinjs `getId()` show). */
export function txid(tx: BitcoinTransaction): Uint8Array {
  return txidInternal(tx).reverse();
}
