import { sha256 } from '@noble/hashes/sha2.js';
import { describe, expect, it } from 'vitest';
import { signDigest, verifyDigest } from '../../src/shared/secp256k1.js';
import { bip143, hex, toHex } from '../../test/vectors/bitcoin/vectors.js';
import { encodeDer } from './der.js';
import { parseTransaction } from './parseTransaction.js';
import { hash160, p2pkhScript } from './script.js';
import { segwitV0Sighash } from './segwitV0Sighash.js';

const v = bip143.nativeP2wpkh;

describe('segwitV0Sighash (BIP-143 native P2WPKH example)', () => {
  const tx = parseTransaction(hex(v.unsignedTx), { field: 'tx', allowWitness: true });

  it('the intermediate hashes of the transaction are the BIP values', () => {
    const dsha = (b: Uint8Array) => toHex(sha256(sha256(b)));
    expect(
      dsha(Buffer.concat(tx.inputs.map((i) => Buffer.concat([i.prevTxid, Buffer.from([i.vout, 0, 0, 0])])))),
    ).toBe(v.hashPrevouts);
    expect(dsha(hex('eeffffffffffffff'))).toBe(v.hashSequence);
  });

  it('the scriptCode is the P2PKH script of the key hash in the P2WPKH program', () => {
    expect(toHex(hash160(hex(v.publicKey)))).toBe(v.scriptPubKey.slice(4));
    expect(toHex(p2pkhScript(hex(v.scriptPubKey).subarray(2)))).toBe(v.scriptCode);
  });

  it('computes the published sighash', () => {
    const digest = segwitV0Sighash(tx, v.inputIndex, hex(v.scriptCode), BigInt(v.amount), 1);
    expect(toHex(digest)).toBe(v.sighash);
  });

  it('reproduces the published DER signature (RFC 6979, low S) and it verifies', () => {
    const sig = signDigest(hex(v.sighash), hex(v.privateKey));
    expect(toHex(encodeDer(sig.compact))).toBe(v.derSignature);
    expect(verifyDigest(hex(v.sighash), sig.compact, hex(v.publicKey))).toBe(true);
  });

  it('commits to the amount', () => {
    const digest = segwitV0Sighash(tx, v.inputIndex, hex(v.scriptCode), BigInt(v.amount) + 1n, 1);
    expect(toHex(digest)).not.toBe(v.sighash);
  });

  it('refuses sighash types other than ALL', () => {
    expect(() => segwitV0Sighash(tx, v.inputIndex, hex(v.scriptCode), BigInt(v.amount), 2)).toThrow(
      'only SIGHASH_ALL is signed',
    );
  });
});
