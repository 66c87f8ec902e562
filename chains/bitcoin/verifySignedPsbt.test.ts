import { schnorr } from '@noble/curves/secp256k1.js';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import {
  bip340,
  editPsbt,
  hex,
  KEY_A,
  KEY_B,
  mixedFixture,
  PUB_A,
  PUB_B,
  signPlan,
} from '../../test/vectors/bitcoin/vectors.js';
import { applySignatures } from './applySignatures.js';
import { parsePsbt } from './parsePsbt.js';
import { serializePsbt } from './serializePsbt.js';
import { signingPlan } from './signingPlan.js';
import { verifySignedPsbt } from './verifySignedPsbt.js';

const fx = mixedFixture();
const psbt = parsePsbt(fx.psbt);
const plan = signingPlan(psbt, { publicKey: PUB_A });
const signed = serializePsbt(applySignatures(psbt, plan, signPlan(plan, KEY_A)));

function expectFailure(fn: () => unknown, reason: string): void {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(CountersignError);
  expect((err as CountersignError).code).toBe('SIGNATURE_VERIFICATION_FAILED');
  expect((err as CountersignError).message).toContain(reason);
}

describe('verifySignedPsbt', () => {
  it('accepts the signed PSBT', () => {
    expect(() => verifySignedPsbt(signed, fx.psbt, PUB_A, 'regtest')).not.toThrow();
  });

  it('fails for another expected signer', () => {
    expectFailure(() => verifySignedPsbt(signed, fx.psbt, PUB_B), 'does not belong to the signer');
  });

  it('fails when the ECDSA signature was made with another key', () => {
    const sigs = signPlan(plan, KEY_A);
    sigs[1] = signPlan({ inputs: [plan.inputs[1]!] }, KEY_B)[0]!;
    const bad = serializePsbt(applySignatures(psbt, plan, sigs));
    expectFailure(
      () => verifySignedPsbt(bad, fx.psbt, PUB_A),
      'input 1: the ECDSA signature does not verify',
    );
  });

  it('fails when the Schnorr signature was made with the untweaked key', () => {
    const sigs = signPlan(plan, KEY_A);
    const raw = schnorr.sign(plan.inputs[2]!.digest, KEY_A);
    sigs[2] = { r: raw.slice(0, 32), s: raw.slice(32), v: 0 };
    const bad = serializePsbt(applySignatures(psbt, plan, sigs));
    expectFailure(() => verifySignedPsbt(bad, fx.psbt, PUB_A), 'tweaked output key');
  });

  it('fails when the unsigned transaction or an output map changed', () => {
    const otherLocktime = editPsbt(signed, (m) => {
      const v = m.global.entries[0]!.value;
      v[v.length - 1] = 1;
    });
    expectFailure(() => verifySignedPsbt(otherLocktime, fx.psbt, PUB_A), 'global map');
    const outputNote = editPsbt(signed, (m) => {
      m.outputs[0]!.entries.push({ key: Uint8Array.of(0xfc, 1), value: Uint8Array.of(1) });
    });
    expectFailure(() => verifySignedPsbt(outputNote, fx.psbt, PUB_A), 'output map 0');
  });

  it('fails when a pair of an input was removed or an extra pair added', () => {
    const dropped = editPsbt(signed, (m) => {
      m.inputs[2]!.entries = m.inputs[2]!.entries.filter((e) => e.key[0] !== 0x17);
    });
    expectFailure(() => verifySignedPsbt(dropped, fx.psbt, PUB_A), 'removed or changed');
    const extra = editPsbt(signed, (m) => {
      m.inputs[3]!.entries.push({ key: Uint8Array.of(0xfc, 2), value: Uint8Array.of(2) });
    });
    expectFailure(() => verifySignedPsbt(extra, fx.psbt, PUB_A), 'does not belong to the signer');
  });

  it('fails when one of the signer’s inputs was left unsigned', () => {
    const partial = editPsbt(signed, (m) => {
      m.inputs[1]!.entries = m.inputs[1]!.entries.filter((e) => e.key[0] !== 0x02);
    });
    expectFailure(() => verifySignedPsbt(partial, fx.psbt, PUB_A), 'input 1 must gain exactly its signature');
  });

  it('fails for a flipped byte in any signature', () => {
    const out = parsePsbt(signed);
    for (const i of [0, 1, 2]) {
      const bad = editPsbt(signed, (m) => {
        const e = m.inputs[i]!.entries.find((x) => x.key[0] === 0x02 || x.key[0] === 0x13)!;
        e.value[10] = (e.value[10] as number) ^ 1;
      });
      expect(() => verifySignedPsbt(bad, fx.psbt, PUB_A), `input ${i}`).toThrow(CountersignError);
    }
    expect(out.inputs).toHaveLength(4);
  });

  it('fails when handed bytes that are not a PSBT', () => {
    expectFailure(() => verifySignedPsbt(signed.subarray(0, 40), fx.psbt, PUB_A), 'does not parse');
  });
});

describe('BIP-340 test vectors against the Schnorr verifier verifySignedPsbt uses', () => {
  it.each(bip340.vectors)('row $index ($comment) verifies = $valid', (v) => {
    let ok: boolean;
    try {
      ok = schnorr.verify(hex(v.signature), hex(v.message), hex(v.publicKey));
    } catch {
      ok = false;
    }
    expect(ok).toBe(v.valid);
  });

  it.each(bip340.vectors.filter((v) => v.secretKey !== ''))(
    'row $index signs to the published signature',
    (v) => {
      expect(
        Buffer.from(schnorr.sign(hex(v.message), hex(v.secretKey), hex(v.auxRand))).toString('hex'),
      ).toBe(v.signature);
    },
  );
});
