import * as bitcoin from 'bitcoinjs-lib';
import { ECPairFactory } from 'ecpair';
import * as ecc from 'tiny-secp256k1';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { KEY_A, KEY_B, mixedFixture, PUB_A, signPlan, toHex } from '../../test/vectors/bitcoin/vectors.js';
import { applySignatures } from './applySignatures.js';
import { assertFinalizable } from './assertFinalizable.js';
import { parsePsbt } from './parsePsbt.js';
import { planSignatures } from './planSignatures.js';
import { serializePsbt } from './serializePsbt.js';
import { signingPlan } from './signingPlan.js';

const fx = mixedFixture();
const psbt = parsePsbt(fx.psbt);
const plan = signingPlan(psbt, { publicKey: PUB_A });

function codeOf(fn: () => unknown): [string | undefined, string | undefined] {
  try {
    fn();
  } catch (e) {
    if (e instanceof CountersignError) return [e.code, e.field];
    throw e;
  }
  return [undefined, undefined];
}

describe('planSignatures', () => {
  it('reads back what applySignatures wrote, with the ECDSA recovery id', () => {
    const sigs = signPlan(plan, KEY_A);
    const signed = parsePsbt(serializePsbt(applySignatures(psbt, plan, sigs)));
    const read = planSignatures(signed, plan);
    expect(read.map((s) => [toHex(s.r), toHex(s.s), s.v])).toEqual(
      sigs.map((s, i) => [toHex(s.r), toHex(s.s), plan.inputs[i]!.scheme === 'ECDSA_SECP256K1' ? s.v : 0]),
    );
  });

  it('fails verification when a planned input carries no signature', () => {
    expect(codeOf(() => planSignatures(psbt, plan))[0]).toBe('SIGNATURE_VERIFICATION_FAILED');
  });
});

describe('assertFinalizable', () => {
  it('refuses while the input of key B is unsigned, naming it', () => {
    expect(codeOf(() => assertFinalizable(psbt, plan))).toEqual([
      'BITCOIN_CANNOT_FINALIZE',
      'inputs[3].partial_sig',
    ]);
  });

  it('accepts once key B has signed its input (with bitcoinjs-lib)', () => {
    const p = bitcoin.Psbt.fromBuffer(fx.psbt, { network: bitcoin.networks.regtest });
    p.signInput(3, ECPairFactory(ecc).fromPrivateKey(KEY_B));
    const withB = parsePsbt(p.toBuffer());
    expect(() => assertFinalizable(withB, signingPlan(withB, { publicKey: PUB_A }))).not.toThrow();
  });
});
