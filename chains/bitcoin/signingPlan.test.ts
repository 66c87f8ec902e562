import * as btc from '@scure/btc-signer';
import * as bitcoin from 'bitcoinjs-lib';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { editPsbt, mixedFixture, PUB_A, PUB_B, PUB_C, toHex } from '../../test/vectors/bitcoin/vectors.js';
import { parsePsbt } from './parsePsbt.js';
import { signingPlan } from './signingPlan.js';

const fx = mixedFixture();

function expectField(fn: () => unknown, code: string, field: string): void {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(CountersignError);
  expect((err as CountersignError).code).toBe(code);
  expect((err as CountersignError).field).toBe(field);
}

/** The fixture with one input field changed through bitcoinjs. */
function variant(edit: (p: bitcoin.Psbt) => void): Uint8Array {
  const p = bitcoin.Psbt.fromBuffer(fx.psbt, { network: bitcoin.networks.regtest });
  edit(p);
  return p.toBuffer();
}

describe('signingPlan on a P2PKH + P2WPKH + P2TR (key A) + P2WPKH (key B) PSBT', () => {
  const psbt = parsePsbt(fx.psbt);
  const plan = signingPlan(psbt, { publicKey: PUB_A });
  const tx = bitcoin.Transaction.fromBuffer(
    bitcoin.Psbt.fromBuffer(fx.psbt).data.globalMap.unsignedTx.toBuffer(),
  );

  it('plans exactly the three inputs of key A, with their schemes and default sighash types', () => {
    expect(plan.inputs.map((p) => [p.inputIndex, p.scriptType, p.scheme, p.sighashType])).toEqual([
      [0, 'P2PKH', 'ECDSA_SECP256K1', 1],
      [1, 'P2WPKH', 'ECDSA_SECP256K1', 1],
      [2, 'P2TR', 'SCHNORR_BIP340', 0],
    ]);
  });

  it("computes bitcoinjs-lib's legacy, BIP-143 and BIP-341 sighashes", () => {
    const [p2pkh, p2wpkh, p2tr] = plan.inputs;
    expect(toHex(p2pkh!.digest)).toBe(toHex(tx.hashForSignature(0, fx.prevScripts[0]!, 1)));
    expect(toHex(p2wpkh!.digest)).toBe(toHex(tx.hashForWitnessV0(1, fx.prevScripts[0]!, 200_000n, 1)));
    expect(toHex(p2tr!.digest)).toBe(toHex(tx.hashForWitnessV1(2, fx.prevScripts, fx.prevValues, 0)));
  });

  it("computes @scure/btc-signer's sighashes", () => {
    const scure = btc.Transaction.fromPSBT(fx.psbt);
    const legacy = (
      scure as unknown as { preimageLegacy(i: number, s: Uint8Array, t: number): Uint8Array }
    ).preimageLegacy(0, fx.prevScripts[0]!, 1);
    expect(toHex(plan.inputs[0]!.digest)).toBe(toHex(legacy));
    expect(toHex(plan.inputs[1]!.digest)).toBe(
      toHex(scure.preimageWitnessV0(1, fx.prevScripts[0]!, 1, 200_000n)),
    );
    expect(toHex(plan.inputs[2]!.digest)).toBe(
      toHex(scure.preimageWitnessV1(2, fx.prevScripts, 0, fx.prevValues)),
    );
  });

  it('plans only input 3 for key B', () => {
    expect(signingPlan(psbt, { publicKey: PUB_B }).inputs.map((p) => p.inputIndex)).toEqual([3]);
  });

  it('honours an explicit SIGHASH_ALL on the taproot input (65-byte signature later)', () => {
    const p = signingPlan(parsePsbt(variant((x) => x.updateInput(2, { sighashType: 1 }))), {
      publicKey: PUB_A,
    });
    expect(p.inputs[2]!.sighashType).toBe(1);
    expect(toHex(p.inputs[2]!.digest)).toBe(toHex(tx.hashForWitnessV1(2, fx.prevScripts, fx.prevValues, 1)));
  });
});

describe('signingPlan refusals', () => {
  it('names sign_with when no input belongs to the signer', () => {
    expectField(
      () => signingPlan(parsePsbt(fx.psbt), { publicKey: PUB_C }),
      'BITCOIN_NO_INPUT_FOR_SIGNER',
      'sign_with',
    );
  });

  it.each([
    [0, 2, 'SIGHASH_NONE on P2PKH'],
    [1, 0x81, 'ALL|ANYONECANPAY on P2WPKH'],
    [1, 0, 'DEFAULT on P2WPKH'],
    [2, 2, 'SIGHASH_NONE on P2TR'],
    [2, 3, 'SIGHASH_SINGLE on P2TR'],
  ])('refuses sighash type on input %i = %i (%s), naming inputs[i].sighash_type', (index, type) => {
    const bytes = editPsbt(fx.psbt, (m) => {
      m.inputs[index]!.entries.push({ key: Uint8Array.of(0x03), value: Uint8Array.of(type, 0, 0, 0) });
    });
    expectField(
      () => signingPlan(parsePsbt(bytes), { publicKey: PUB_A }),
      'BITCOIN_SIGHASH_UNSUPPORTED',
      `inputs[${index}].sighash_type`,
    );
  });

  it('ignores a refused sighash type on an input of another key', () => {
    const bytes = variant((x) => x.updateInput(3, { sighashType: 2 }));
    expect(signingPlan(parsePsbt(bytes), { publicKey: PUB_A }).inputs).toHaveLength(3);
  });

  it('requires non_witness_utxo for a P2PKH input', () => {
    const bytes = editPsbt(fx.psbt, (m) => {
      const value = Buffer.concat([
        Buffer.from('a086010000000000', 'hex'),
        Buffer.from([25]),
        fx.prevScripts[0]!,
      ]);
      m.inputs[0]!.entries = [{ key: Uint8Array.of(0x01), value }];
    });
    expectField(
      () => signingPlan(parsePsbt(bytes), { publicKey: PUB_A }),
      'BITCOIN_MISSING_UTXO',
      'inputs[0].non_witness_utxo',
    );
  });

  it('refuses an input the signer already signed', () => {
    const bytes = editPsbt(fx.psbt, (m) => {
      m.inputs[2]!.entries.push({ key: Uint8Array.of(0x13), value: new Uint8Array(64).fill(1) });
    });
    expectField(
      () => signingPlan(parsePsbt(bytes), { publicKey: PUB_A }),
      'BITCOIN_INPUT_ALREADY_SIGNED',
      'inputs[2].tap_key_sig',
    );
  });

  it('refuses a public key that is not a compressed secp256k1 point', () => {
    expectField(
      () => signingPlan(parsePsbt(fx.psbt), { publicKey: new Uint8Array(33) }),
      'FIELD_INVALID',
      'sign_with',
    );
  });
});
