/** Typed access to the Bitcoin JSON vectors, plus a PSBT fixture built with bitcoinjs-lib for cross-checks. */
import { readFileSync } from 'node:fs';
import { schnorr } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import * as bitcoin from 'bitcoinjs-lib';
import * as ecc from 'tiny-secp256k1';
import { publicKeyOf, signDigest } from '../../../src/shared/secp256k1.js';
import { taprootOutputKey, taprootTweakPrivateKey } from '../../../src/service/keys/taproot.js';

function load<T>(name: string): T {
  return JSON.parse(readFileSync(new URL(name, import.meta.url), 'utf8')) as T;
}

export function hex(h: string): Uint8Array {
  return new Uint8Array(Buffer.from(h, 'hex'));
}

export function toHex(b: Uint8Array): string {
  return Buffer.from(b).toString('hex');
}

export const bip143 = load<{
  nativeP2wpkh: {
    unsignedTx: string;
    inputIndex: number;
    scriptPubKey: string;
    amount: string;
    scriptCode: string;
    hashPrevouts: string;
    hashSequence: string;
    hashOutputs: string;
    sighash: string;
    privateKey: string;
    publicKey: string;
    derSignature: string;
  };
}>('bip143.json');

export const bip341 = load<{
  keyPathSpending: {
    rawUnsignedTx: string;
    utxosSpent: { amountSats: string; scriptPubKey: string }[];
    intermediary: Record<'hashPrevouts' | 'hashAmounts' | 'hashScriptPubkeys' | 'hashSequences' | 'hashOutputs', string>;
    inputSpending: { txinIndex: number; hashType: number; sigHash: string }[];
  };
}>('bip341.json');

export const bip340 = load<{
  vectors: {
    index: number;
    secretKey: string;
    publicKey: string;
    auxRand: string;
    message: string;
    signature: string;
    valid: boolean;
    comment: string;
  }[];
}>('bip340.json');

bitcoin.initEccLib(ecc);
const regtest = bitcoin.networks.regtest;

/** Test-only keys derived from fixed labels; never use outside tests. */
export const KEY_A = sha256(new TextEncoder().encode('countersign bitcoin test key A'));
export const KEY_B = sha256(new TextEncoder().encode('countersign bitcoin test key B'));
export const PUB_A = publicKeyOf(KEY_A, true);
export const PUB_B = publicKeyOf(KEY_B, true);

export interface MixedFixture {
  /** The unsigned PSBT (bitcoinjs `toBuffer`). */
  psbt: Uint8Array;
  /** The funding transaction every input spends. */
  funding: bitcoin.Transaction;
  /** Spent scripts and values per input, in input order. */
  prevScripts: Uint8Array[];
  prevValues: bigint[];
}

/**
 * A regtest PSBT built with bitcoinjs-lib: input 0 P2PKH(A) with non_witness_utxo, input 1 P2WPKH(A), input 2
 * P2TR(A) key path with tap_internal_key, input 3 P2WPKH(B); two outputs, fee 10 000 sat.
 */
export function mixedFixture(): MixedFixture {
  const p2pkh = bitcoin.payments.p2pkh({ pubkey: PUB_A, network: regtest }).output!;
  const p2wpkh = bitcoin.payments.p2wpkh({ pubkey: PUB_A, network: regtest }).output!;
  const p2tr = bitcoin.payments.p2tr({ internalPubkey: PUB_A.subarray(1), network: regtest }).output!;
  const otherP2wpkh = bitcoin.payments.p2wpkh({ pubkey: PUB_B, network: regtest }).output!;
  const funding = new bitcoin.Transaction();
  funding.version = 2;
  funding.addInput(new Uint8Array(32).fill(7), 0);
  const prevScripts = [p2pkh, p2wpkh, p2tr, otherP2wpkh];
  const prevValues = [100_000n, 200_000n, 300_000n, 400_000n];
  prevScripts.forEach((s, i) => funding.addOutput(s, prevValues[i]!));
  const psbt = new bitcoin.Psbt({ network: regtest });
  psbt.setVersion(2);
  psbt.setLocktime(800_000);
  const hash = funding.getHash();
  psbt.addInput({ hash, index: 0, sequence: 0xfffffffd, nonWitnessUtxo: funding.toBuffer() });
  psbt.addInput({ hash, index: 1, sequence: 0xfffffffd, witnessUtxo: { script: p2wpkh, value: 200_000n } });
  psbt.addInput({
    hash,
    index: 2,
    sequence: 0xfffffffd,
    witnessUtxo: { script: p2tr, value: 300_000n },
    tapInternalKey: PUB_A.subarray(1),
  });
  psbt.addInput({ hash, index: 3, sequence: 0xfffffffd, witnessUtxo: { script: otherP2wpkh, value: 400_000n } });
  psbt.addOutput({ script: otherP2wpkh, value: 950_000n });
  psbt.addOutput({ script: bitcoin.payments.p2tr({ pubkey: taprootOutputKey(PUB_A), network: regtest }).output!, value: 40_000n });
  return { psbt: psbt.toBuffer(), funding, prevScripts, prevValues };
}

/** Signs every planned input the way the service does: native ECDSA, or BIP-340 with the BIP-341-tweaked key. */
export function signPlan(
  plan: { inputs: readonly { scheme: string; digest: Uint8Array }[] },
  privateKey: Uint8Array,
): { r: Uint8Array; s: Uint8Array; v: number }[] {
  return plan.inputs.map((p) => {
    if (p.scheme === 'ECDSA_SECP256K1') {
      const sig = signDigest(p.digest, privateKey);
      return { r: sig.compact.slice(0, 32), s: sig.compact.slice(32), v: sig.recovery };
    }
    const tweaked = taprootTweakPrivateKey(privateKey);
    const sig = schnorr.sign(p.digest, tweaked);
    return { r: sig.slice(0, 32), s: sig.slice(32), v: 0 };
  });
}

/** bitcoinjs `validateSignaturesOfInput` validator: Schnorr for 32-byte keys, ECDSA otherwise. */
export function validator(pubkey: Uint8Array, msghash: Uint8Array, signature: Uint8Array): boolean {
  return pubkey.length === 32 ? ecc.verifySchnorr(msghash, pubkey, signature) : ecc.verify(msghash, pubkey, signature);
}

export const KEY_C = sha256(new TextEncoder().encode('countersign bitcoin test key C'));
export const PUB_C = publicKeyOf(KEY_C, true);

type Entry = { key: Uint8Array; value: Uint8Array };
export type Maps = { global: { entries: Entry[] }; inputs: { entries: Entry[] }[]; outputs: { entries: Entry[] }[] };

/**
 * Re-encodes a PSBT after editing its raw key-value maps (BIP-174 layout written out here, independent of the
 * code under test), so tests can build PSBTs that bitcoinjs refuses to produce.
 */
export function editPsbt(bytes: Uint8Array, edit: (maps: Maps) => void): Uint8Array {
  let pos = 5;
  const varint = (): number => {
    const b = bytes[pos++]!;
    if (b < 0xfd) return b;
    if (b === 0xfd) {
      const v = bytes[pos]! | (bytes[pos + 1]! << 8);
      pos += 2;
      return v;
    }
    const v = Buffer.from(bytes.subarray(pos, pos + 4)).readUInt32LE(0);
    pos += 4;
    return v;
  };
  const readMap = (): Entry[] => {
    const out: Entry[] = [];
    for (;;) {
      const kl = varint();
      if (kl === 0) return out;
      const key = bytes.slice(pos, pos + kl);
      pos += kl;
      const vl = varint();
      out.push({ key, value: bytes.slice(pos, pos + vl) });
      pos += vl;
    }
  };
  const ref = bitcoin.Psbt.fromBuffer(bytes);
  const maps: Maps = { global: { entries: readMap() }, inputs: [], outputs: [] };
  for (let i = 0; i < ref.inputCount; i++) maps.inputs.push({ entries: readMap() });
  for (let i = 0; i < ref.txOutputs.length; i++) maps.outputs.push({ entries: readMap() });
  edit(maps);
  return encodePsbt(maps);
}

/** BIP-174 layout of raw maps (lengths below 65 536). */
export function encodePsbt(maps: Maps): Uint8Array {
  const enc = (n: number): number[] => (n < 0xfd ? [n] : [0xfd, n & 0xff, n >> 8]);
  const out: number[] = [0x70, 0x73, 0x62, 0x74, 0xff];
  for (const m of [maps.global, ...maps.inputs, ...maps.outputs]) {
    for (const e of m.entries) out.push(...enc(e.key.length), ...e.key, ...enc(e.value.length), ...e.value);
    out.push(0);
  }
  return Uint8Array.from(out);
}
