import type { DigestToSign } from '../types.js';
import { txId } from './txId.js';
import type { TronTransaction } from './types.js';

/** What a Tron transaction's signer signs: the txID itself, no further hashing (ECDSA secp256k1). */
export function digests(tx: TronTransaction): DigestToSign[] {
  return [{ scheme: 'ECDSA_SECP256K1', payload: txId(tx.rawData) }];
}
