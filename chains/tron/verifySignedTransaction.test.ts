import { utils } from 'tronweb';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { SECP256K1_N, signDigest } from '../../src/shared/secp256k1.js';
import { fieldsFromJson, hex, toHex, transactionVectors } from '../../test/vectors/tron/vectors.js';
import { assembleSignedTransaction } from './assembleSignedTransaction.js';
import { parseRawData } from './parseRawData.js';
import { encodeFields } from './protobuf.js';
import { rawDataFromFields } from './rawDataFromFields.js';
import { txId } from './txId.js';
import { verifySignedTransaction } from './verifySignedTransaction.js';
import type { TronTransaction } from './types.js';

const key = hex(transactionVectors.privateKey);
const SIGNER = transactionVectors.signer;
const OTHER = transactionVectors.recipient;
/** anvil account 1's key: it controls OTHER. */
const OTHER_KEY = hex('59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');

function sign(tx: TronTransaction, seckey = key) {
  const sig = signDigest(txId(tx.rawData), seckey);
  return { r: sig.compact.slice(0, 32), s: sig.compact.slice(32), yParity: sig.recovery };
}

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

/** raw_data with its last bit flipped (still a valid transaction: the last byte is in a varint or an address). */
function flipLastBit(raw: Uint8Array): Uint8Array {
  const out = raw.slice();
  out[out.length - 1] = (out[out.length - 1] as number) ^ 1;
  return out;
}

/** Replaces the last (v) byte of a signed transaction. */
function withV(signed: Uint8Array, v: number): Uint8Array {
  const out = signed.slice();
  out[out.length - 1] = v;
  return out;
}

describe.each(transactionVectors.transactions)('verifySignedTransaction on $name', (v) => {
  const raw = hex(v.rawDataHex);
  const tx = parseRawData(raw);
  const sig = sign(tx);
  const signed = assembleSignedTransaction(tx, sig);

  it('passes for the expected signer (base58 or 41-hex) and returns the txID', () => {
    for (const who of [SIGNER, utils.address.toHex(SIGNER)]) {
      const out = verifySignedTransaction(signed, raw, who);
      expect(out.signer).toBe(SIGNER);
      expect(toHex(out.hash)).toBe(v.txID);
    }
  });

  it("passes on tronweb's own signed transaction (v written as 1B/1C)", () => {
    expect(verifySignedTransaction(hex(v.signedHex), raw, SIGNER).signer).toBe(SIGNER);
  });

  it('accepts v as a raw y-parity (0/1) as well', () => {
    expect(verifySignedTransaction(withV(signed, sig.yParity), raw, SIGNER).signer).toBe(SIGNER);
  });

  it('fails for another expected signer', () => {
    expectFailure(() => verifySignedTransaction(signed, raw, OTHER), 'not the expected signer');
  });

  it('fails when the signed raw_data was tampered with', () => {
    const tampered = flipLastBit(raw);
    const forged = assembleSignedTransaction(parseRawData(tampered), sig);
    expectFailure(() => verifySignedTransaction(forged, raw, SIGNER), 'differs from the unsigned raw_data');
  });

  it('fails when raw_data and unsigned were both changed after signing (recovers someone else)', () => {
    const tampered = flipLastBit(raw);
    const forged = assembleSignedTransaction(parseRawData(tampered), sig);
    expectFailure(() => verifySignedTransaction(forged, tampered, SIGNER), 'not the expected signer');
  });

  it('fails for the flipped v', () => {
    expectFailure(
      () => verifySignedTransaction(withV(signed, 28 - sig.yParity), raw, SIGNER),
      'not the expected signer',
    );
  });

  it('fails for a v that is neither 27/28 nor 0/1', () => {
    for (const bad of [2, 26, 29, 35, 0x1b + 0x80]) {
      expectFailure(
        () => verifySignedTransaction(withV(signed, bad), raw, SIGNER),
        'is neither 27/28 nor 0/1',
      );
    }
  });

  it('fails for the high-S twin of a valid signature', () => {
    const highS = SECP256K1_N - BigInt(`0x${toHex(sig.s)}`);
    const twin = assembleSignedTransaction(tx, {
      r: sig.r,
      s: hex(highS.toString(16).padStart(64, '0')),
      yParity: 1 - sig.yParity,
    });
    expectFailure(() => verifySignedTransaction(twin, raw, SIGNER), 'lower half');
  });

  it('fails for two signatures', () => {
    const two = encodeFields([
      { field: 1, wireType: 2, value: raw },
      { field: 2, wireType: 2, value: signed.subarray(signed.length - 65) },
      { field: 2, wireType: 2, value: signed.subarray(signed.length - 65) },
    ]);
    expectFailure(() => verifySignedTransaction(two, raw, SIGNER), 'exactly one signature, got 2');
  });

  it('fails for bytes that do not parse', () => {
    expectFailure(() => verifySignedTransaction(signed.subarray(0, 40), raw, SIGNER), 'does not parse');
  });

  it('fails for an expected signer that is not a Tron address', () => {
    expectFailure(
      () => verifySignedTransaction(signed, raw, '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'),
      'not a Tron address',
    );
  });
});

describe('verifySignedTransaction binds the signer to owner_address', () => {
  it('fails when the key that signed is the expected signer but not the owner of the contract', () => {
    // OTHER's key signs a transfer owned by SIGNER: the signature is valid for OTHER, the owner is not.
    const fields = fieldsFromJson(transactionVectors.transactions[0]!.fields!);
    const raw = rawDataFromFields({ ...fields, toAddress: 'TPL66VK2gCXNCD7EJg9pgJRfqcRazjhUZY' });
    const tx = parseRawData(raw);
    const signed = assembleSignedTransaction(tx, sign(tx, OTHER_KEY));
    expectFailure(
      () => verifySignedTransaction(signed, raw, OTHER),
      `contract[0].owner_address is ${SIGNER}, not the signer ${OTHER}`,
    );
  });
});
