import { Transaction } from 'bitcoinjs-lib';
import { serializeTransaction } from './serializeTransaction.js';
import type { BitcoinTransaction } from './types.js';

/**
 * The transaction as bitcoinjs-lib's `Transaction`, whose sighash methods (BIP-143, BIP-341 and the
 * legacy SignatureHash) compute what is signed. Built once per parsed transaction: the plan, the
 * signer and the verifier ask for several inputs of the same one.
 */
const CACHE = new WeakMap<BitcoinTransaction, Transaction>();

export function libTransaction(tx: BitcoinTransaction): Transaction {
  let lib = CACHE.get(tx);
  if (lib === undefined) {
    lib = Transaction.fromBuffer(serializeTransaction(tx, { witness: false }));
    CACHE.set(tx, lib);
  }
  return lib;
}
