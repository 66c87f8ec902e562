import * as btc from '@scure/btc-signer';
import * as bitcoin from 'bitcoinjs-lib';
import { ECPairFactory } from 'ecpair';
import * as ecc from 'tiny-secp256k1';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { signerAddresses } from './signerAddresses.js';
import {
  KEY_A,
  KEY_B,
  mixedFixture,
  PUB_A,
  signPlan,
  toHex,
  validator,
} from '../../test/vectors/bitcoin/vectors.js';
import { applySignatures } from './applySignatures.js';
import { finalizeAndExtract } from './finalizeAndExtract.js';
import { parsePsbt } from './parsePsbt.js';
import { serializePsbt } from './serializePsbt.js';
import { signingPlan } from './signingPlan.js';
import { verifySignedPsbt } from './verifySignedPsbt.js';

const regtest = bitcoin.networks.regtest;
const fx = mixedFixture();

describe('sign with key A: plan → sign → applySignatures → verify → finalize', () => {
  const psbt = parsePsbt(fx.psbt);
  const plan = signingPlan(psbt, { publicKey: PUB_A });
  const signed = serializePsbt(applySignatures(psbt, plan, signPlan(plan, KEY_A)));

  it('writes partial_sig for the ECDSA inputs and a 64-byte tap_key_sig for the taproot one, nothing else', () => {
    const out = parsePsbt(signed);
    expect(out.inputs[0]!.partialSigs.map((p) => toHex(p.pubkey))).toEqual([toHex(PUB_A)]);
    expect(out.inputs[1]!.partialSigs.map((p) => toHex(p.pubkey))).toEqual([toHex(PUB_A)]);
    expect(out.inputs[2]!.tapKeySig).toHaveLength(64);
    expect(out.inputs[3]!.entries).toEqual(psbt.inputs[3]!.entries);
    expect(out.inputs[0]!.partialSigs[0]!.signature.at(-1)).toBe(1);
    expect(
      out.inputs.every((i) => i.finalScriptSig === undefined && i.finalScriptWitness === undefined),
    ).toBe(true);
  });

  it('bitcoinjs-lib validates the signatures of our inputs and finds none on the other key', () => {
    const p = bitcoin.Psbt.fromBuffer(signed, { network: regtest });
    for (const i of [0, 1, 2]) expect(p.validateSignaturesOfInput(i, validator)).toBe(true);
    expect(() => p.validateSignaturesOfInput(3, validator)).toThrow('No signatures to validate');
  });

  it('verifySignedPsbt accepts it and returns the display-order txid and the signer address', () => {
    const out = verifySignedPsbt(signed, fx.psbt, PUB_A, 'regtest');
    const unsignedTx = bitcoin.Psbt.fromBuffer(fx.psbt).data.globalMap.unsignedTx.toBuffer();
    expect(toHex(out.hash)).toBe(bitcoin.Transaction.fromBuffer(unsignedTx).getId());
    expect(out.signer).toBe(signerAddresses(PUB_A, 'regtest').P2PKH);
  });

  it('after key B signs with bitcoinjs, finalizeAndExtract equals bitcoinjs and @scure/btc-signer', () => {
    const p = bitcoin.Psbt.fromBuffer(signed, { network: regtest });
    p.signInput(3, ECPairFactory(ecc).fromPrivateKey(KEY_B));
    const both = p.toBuffer();
    const ours = finalizeAndExtract(parsePsbt(both));

    p.finalizeAllInputs();
    const theirs = p.extractTransaction();
    expect(toHex(ours.transaction)).toBe(theirs.toHex());
    expect(toHex(ours.txid)).toBe(theirs.getId());
    expect(toHex(ours.wtxid)).toBe(toHex(theirs.getHash(true).reverse()));

    const scure = btc.Transaction.fromPSBT(both);
    scure.finalize();
    expect(toHex(ours.transaction)).toBe(toHex(scure.extract()));
    const reparsed = btc.Transaction.fromRaw(ours.transaction);
    expect(reparsed.id).toBe(toHex(ours.txid));
    expect(reparsed.isFinal).toBe(true);
  });

  it('finalizeAndExtract refuses while the input of key B is unsigned (BITCOIN_CANNOT_FINALIZE)', () => {
    let err: unknown;
    try {
      finalizeAndExtract(parsePsbt(signed));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CountersignError);
    expect((err as CountersignError).code).toBe('BITCOIN_CANNOT_FINALIZE');
    expect((err as CountersignError).field).toBe('inputs[3].partial_sig');
  });

  it('a taproot input with SIGHASH_ALL gets a 65-byte signature that bitcoinjs validates', () => {
    const p = bitcoin.Psbt.fromBuffer(fx.psbt, { network: regtest });
    p.updateInput(2, { sighashType: 1 });
    const unsigned = p.toBuffer();
    const parsed = parsePsbt(unsigned);
    const pl = signingPlan(parsed, { publicKey: PUB_A });
    const s = serializePsbt(applySignatures(parsed, pl, signPlan(pl, KEY_A)));
    expect(parsePsbt(s).inputs[2]!.tapKeySig?.at(64)).toBe(1);
    expect(bitcoin.Psbt.fromBuffer(s).validateSignaturesOfInput(2, validator)).toBe(true);
    expect(verifySignedPsbt(s, unsigned, PUB_A, 'regtest').signer).toBe(
      signerAddresses(PUB_A, 'regtest').P2PKH,
    );
  });

  it('normalizes a high-S ECDSA signature to low S', () => {
    const sigs = signPlan(plan, KEY_A);
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const s = BigInt(`0x${toHex(sigs[1]!.s)}`);
    sigs[1] = { ...sigs[1]!, s: Uint8Array.from(Buffer.from((n - s).toString(16).padStart(64, '0'), 'hex')) };
    const out = applySignatures(psbt, plan, sigs);
    // ECDSA is deterministic (RFC 6979); the Schnorr signature uses fresh aux randomness, so compare input 1.
    expect(out.inputs[1]!.entries).toEqual(parsePsbt(signed).inputs[1]!.entries);
    expect(() => verifySignedPsbt(serializePsbt(out), fx.psbt, PUB_A, 'regtest')).not.toThrow();
  });

  it('refuses a signature count that does not match the plan', () => {
    expect(() => applySignatures(psbt, plan, signPlan(plan, KEY_A).slice(1))).toThrow(
      'signature(s) came back',
    );
  });
});
