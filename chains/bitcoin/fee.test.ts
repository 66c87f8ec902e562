import * as bitcoin from 'bitcoinjs-lib';
import { describe, expect, it } from 'vitest';
import {
  KEY_A,
  PUB_A,
  PUB_B,
  mixedFixture,
  signPlan,
  validator,
} from '../../test/vectors/bitcoin/vectors.js';
import { applySignatures } from './applySignatures.js';
import { fee, policyFee } from './fee.js';
import { MAX_MONEY } from './types.js';
import { parsePsbt } from './parsePsbt.js';
import { serializePsbt } from './serializePsbt.js';
import { signingPlan } from './signingPlan.js';

const regtest = bitcoin.networks.regtest;
const p2wpkh = (pubkey: Uint8Array) => bitcoin.payments.p2wpkh({ pubkey, network: regtest }).output!;
const p2tr = (pubkey: Uint8Array) =>
  bitcoin.payments.p2tr({ internalPubkey: pubkey.subarray(1), network: regtest }).output!;

/** A funding transaction paying each script its value, as the previous transaction of every input. */
function funding(outputs: { script: Uint8Array; value: bigint }[]): bitcoin.Transaction {
  const tx = new bitcoin.Transaction();
  tx.version = 2;
  tx.addInput(new Uint8Array(32).fill(9), 0);
  for (const o of outputs) tx.addOutput(o.script, o.value);
  return tx;
}

/**
 * A PSBT spending every output of `prev`: input i states `claimed[i]` as its amount in witness_utxo
 * (the truth unless a test lies), or carries the whole previous transaction when `full` says so.
 */
function spend(
  prev: bitcoin.Transaction,
  opts: { claimed?: bigint[]; full?: boolean[]; pay: bigint; tapInternalKey?: Uint8Array },
): Uint8Array {
  const psbt = new bitcoin.Psbt({ network: regtest });
  prev.outs.forEach((o, i) => {
    const base = { hash: prev.getHash(), index: i };
    if (opts.full?.[i] === true) psbt.addInput({ ...base, nonWitnessUtxo: prev.toBuffer() });
    else
      psbt.addInput({
        ...base,
        witnessUtxo: { script: o.script, value: opts.claimed?.[i] ?? o.value },
        ...(opts.tapInternalKey !== undefined && o.script.length === 34 && o.script[0] === 0x51
          ? { tapInternalKey: opts.tapInternalKey }
          : {}),
      });
  });
  psbt.addOutput({ script: p2wpkh(PUB_B), value: opts.pay });
  return psbt.toBuffer();
}

describe('policyFee', () => {
  it('two requests, each lying about the other segwit v0 amount, sign a transaction whose real fee their facts never showed', () => {
    // Two P2WPKH outputs of key A, 1 000 000 sat each; the transaction pays 1 000 000 to B: fee 1 000 000.
    const prev = funding([
      { script: p2wpkh(PUB_A), value: 1_000_000n },
      { script: p2wpkh(PUB_A), value: 1_000_000n },
    ]);
    const first = parsePsbt(spend(prev, { claimed: [1_000_000n, 10_000n], pay: 1_000_000n }));
    const second = parsePsbt(spend(prev, { claimed: [10_000n, 1_000_000n], pay: 1_000_000n }));
    // What the PSBTs state: a fee of 10 000 sat each.
    expect(fee(first)).toBe(10_000n);
    expect(fee(second)).toBe(10_000n);

    // Input 0's signature from the first request and input 1's from the second are both valid.
    const signed = [first, second].map((p) => {
      const plan = signingPlan(p, { publicKey: PUB_A });
      return bitcoin.Psbt.fromBuffer(serializePsbt(applySignatures(p, plan, signPlan(plan, KEY_A))), {
        network: regtest,
      });
    });
    const combined = bitcoin.Psbt.fromBuffer(
      spend(prev, { pay: 1_000_000n }), // the true amounts
      { network: regtest },
    );
    combined.updateInput(0, { partialSig: signed[0]!.data.inputs[0]!.partialSig! });
    combined.updateInput(1, { partialSig: signed[1]!.data.inputs[1]!.partialSig! });
    expect(combined.validateSignaturesOfInput(0, validator)).toBe(true);
    expect(combined.validateSignaturesOfInput(1, validator)).toBe(true);
    combined.finalizeAllInputs();
    expect(combined.getFee()).toBe(1_000_000n);
    // The lies are not believed: the fee reads as the most any transaction can pay.
    expect(policyFee(first, PUB_A)).toBe(MAX_MONEY);
    expect(policyFee(second, PUB_A)).toBe(MAX_MONEY);
  });

  it('believes amounts proven by the previous transaction', () => {
    const prev = funding([
      { script: p2wpkh(PUB_A), value: 1_000_000n },
      { script: p2wpkh(PUB_A), value: 1_000_000n },
    ]);
    const psbt = parsePsbt(spend(prev, { full: [true, true], pay: 1_990_000n }));
    expect(policyFee(psbt, PUB_A)).toBe(10_000n);
    // One input's amount proven is not enough while two of the signer's are signed.
    const half = parsePsbt(spend(prev, { full: [true, false], pay: 1_990_000n }));
    expect(policyFee(half, PUB_A)).toBe(MAX_MONEY);
  });

  it('believes the amount of a lone segwit v0 input the signer signs: the signature commits to it', () => {
    const prev = funding([{ script: p2wpkh(PUB_A), value: 250_000n }]);
    expect(policyFee(parsePsbt(spend(prev, { pay: 240_000n })), PUB_A)).toBe(10_000n);
    // Another key's input beside it, stated only by witness_utxo, is not proven by A's signature.
    const two = funding([
      { script: p2wpkh(PUB_A), value: 250_000n },
      { script: p2wpkh(PUB_B), value: 250_000n },
    ]);
    expect(policyFee(parsePsbt(spend(two, { pay: 490_000n })), PUB_A)).toBe(MAX_MONEY);
    expect(policyFee(parsePsbt(spend(two, { full: [false, true], pay: 490_000n })), PUB_A)).toBe(10_000n);
    // The key's legacy input carries its previous transaction; its signature commits to no amount.
    const legacy = funding([
      { script: bitcoin.payments.p2pkh({ pubkey: PUB_A, network: regtest }).output!, value: 250_000n },
      { script: p2wpkh(PUB_A), value: 250_000n },
    ]);
    expect(policyFee(parsePsbt(spend(legacy, { full: [true, false], pay: 490_000n })), PUB_A)).toBe(10_000n);
  });

  it('believes every amount when the signer signs a taproot input: BIP-341 commits to all of them', () => {
    const prev = funding([
      { script: p2tr(PUB_A), value: 300_000n },
      { script: p2wpkh(PUB_B), value: 400_000n },
    ]);
    const psbt = parsePsbt(spend(prev, { pay: 690_000n, tapInternalKey: PUB_A.subarray(1) }));
    expect(policyFee(psbt, PUB_A)).toBe(10_000n);
    // Key B signs only its segwit v0 input, whose signature commits to nothing of input 0.
    expect(policyFee(psbt, PUB_B)).toBe(MAX_MONEY);
  });

  it('without a signer, only amounts proven by previous transactions count', () => {
    const fx = parsePsbt(mixedFixture().psbt);
    expect(policyFee(fx)).toBe(MAX_MONEY);
    expect(policyFee(fx, PUB_A)).toBe(10_000n); // A signs the fixture's P2TR input
    expect(policyFee(fx, Uint8Array.of(2, ...new Uint8Array(32)))).toBe(MAX_MONEY); // not a key
    const prev = funding([{ script: p2wpkh(PUB_A), value: 50_000n }]);
    expect(policyFee(parsePsbt(spend(prev, { full: [true], pay: 40_000n })))).toBe(10_000n);
  });
});
