import { sha256 } from '@noble/hashes/sha2.js';
import { Transaction } from 'bitcoinjs-lib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { signDigest, verifyDigest } from '../../src/shared/secp256k1.js';
import { scriptArb, unsignedTxArb } from '../../test/helpers/bitcoin-arbitraries.js';
import { bip143, hex, toHex } from '../../test/vectors/bitcoin/vectors.js';
import { encodeDer } from './der.js';
import { parseTransaction } from './parseTransaction.js';
import { hash160, p2pkhScript } from './script.js';
import { segwitV0Sighash } from './segwitV0Sighash.js';
import { serializeTransaction } from './serializeTransaction.js';

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

// Scripts up to 300 bytes, so lengths past 252 take the three-byte compactSize.
const script = scriptArb(true);
const txArb = unsignedTxArb({ maxInputs: 4, maxOutputs: 4, longScripts: true });

describe('segwitV0Sighash against bitcoinjs-lib (a second implementation)', () => {
  it("equals hashForWitnessV0 for every input of random transactions, the shared hashes' memo included", () => {
    fc.assert(
      fc.property(
        txArb,
        script,
        fc.bigInt({ min: 0n, max: 2_100_000_000_000_000n }),
        (tx, scriptCode, amount) => {
          const lib = Transaction.fromBuffer(Buffer.from(serializeTransaction(tx, { witness: false })));
          // Each input twice: the second call answers from the transaction's memo of shared hashes.
          for (const round of [0, 1])
            tx.inputs.forEach((_, i) => {
              const ours = segwitV0Sighash(tx, i, scriptCode, amount + BigInt(round), 1);
              const theirs = lib.hashForWitnessV0(i, Buffer.from(scriptCode), amount + BigInt(round), 1);
              expect(toHex(ours)).toBe(toHex(theirs));
            });
        },
      ),
      { numRuns: 200 },
    );
  });

  it('names a missing input', () => {
    const tx = parseTransaction(hex(v.unsignedTx), { field: 'tx', allowWitness: true });
    expect(() => segwitV0Sighash(tx, tx.inputs.length, hex(v.scriptCode), 1n, 1)).toThrow(
      `no input ${tx.inputs.length}`,
    );
  });
});
