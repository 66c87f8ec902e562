import fc from 'fast-check';
import { Rlp } from 'ox';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { signDigest } from '../../src/shared/secp256k1.js';
import { arbitraryTransaction } from '../../test/vectors/tempo/arbitraries.js';
import { DEV_KEY_0, DEV_KEY_1, hex, oxVectors, to0x } from '../../test/vectors/tempo/vectors.js';
import { assemble } from './assemble.js';
import { feePayerDigest } from './feePayerDigest.js';
import { parseSignedTransaction } from './parseSignedTransaction.js';
import { parseUnsignedTransaction } from './parseUnsignedTransaction.js';
import { senderDigest } from './senderDigest.js';
import { serializeUnsignedTransaction } from './serializeUnsignedTransaction.js';
import type { TempoSignature } from './types.js';

function sign(digest: Uint8Array, key: string): TempoSignature {
  const { compact, recovery } = signDigest(digest, hex(key));
  return { r: compact.slice(0, 32), s: compact.slice(32), yParity: recovery };
}

const signedVector = oxVectors.find((v) => v.kind === 'signed')!;

/** Replaces the last RLP field (the sender signature) of a signed envelope. */
function withSignature(signed: string, signature: `0x${string}`): Uint8Array {
  const fields = Rlp.toHex(`0x${signed.slice(4)}`) as unknown[];
  fields[fields.length - 1] = signature;
  return hex(`0x76${Rlp.fromHex(fields as never).slice(2)}`);
}

describe('parseSignedTransaction', () => {
  it('splits the signed ox vector into the unsigned vector and the signature', () => {
    const parsed = parseSignedTransaction(hex(signedVector.hex));
    const unsignedVector = oxVectors.find(
      (v) => v.name === 'TxEnvelopeTempo: authorizationList (empty)',
    )!.hex;
    expect(to0x(parsed.unsigned)).toBe(unsignedVector);
    expect(parsed.tx).toEqual(parseUnsignedTransaction(hex(unsignedVector)));
    expect(parsed.senderSignature.yParity).toBe(1); // v = 0x1c
    expect(to0x(assemble(parsed.tx, parsed.senderSignature))).toBe(signedVector.hex);
    expect(parsed.feePayerSignature).toBeUndefined();
  });

  it('round-trips assembled transactions, sponsored or not, with and without the fee payer', () => {
    fc.assert(
      fc.property(arbitraryTransaction(false), fc.boolean(), (tx, feePayerSigned) => {
        const senderSig = sign(senderDigest(tx), DEV_KEY_0);
        const feePayerSig =
          tx.sponsored && feePayerSigned
            ? sign(feePayerDigest(tx, new Uint8Array(20)), DEV_KEY_1)
            : undefined;
        const signed =
          feePayerSig === undefined ? assemble(tx, senderSig) : assemble(tx, senderSig, feePayerSig);
        const parsed = parseSignedTransaction(signed);
        // The fee token travels only once the fee payer has signed.
        expect(parsed.tx).toEqual(tx.sponsored && feePayerSig === undefined ? { ...tx, feeToken: null } : tx);
        expect(parsed.unsigned).toEqual(serializeUnsignedTransaction(tx));
        expect(parsed.senderSignature).toEqual(senderSig);
        expect(parsed.feePayerSignature).toEqual(feePayerSig);
        const again =
          feePayerSig === undefined
            ? assemble(parsed.tx, senderSig)
            : assemble(parsed.tx, senderSig, feePayerSig);
        expect(again).toEqual(signed);
      }),
      { numRuns: 200 },
    );
  });

  it('accepts v = 0/1 as well as 27/28, and refuses any other v', () => {
    const body = signedVector.hex.slice(-130, -2);
    expect(
      parseSignedTransaction(withSignature(signedVector.hex, `0x${body}01`)).senderSignature.yParity,
    ).toBe(1);
    expect(
      parseSignedTransaction(withSignature(signedVector.hex, `0x${body}1b`)).senderSignature.yParity,
    ).toBe(0);
    for (const v of ['02', '1d', '25']) {
      expect(() => parseSignedTransaction(withSignature(signedVector.hex, `0x${body}${v}`))).toThrow(
        'signature: v is',
      );
    }
  });

  it('refuses P-256, WebAuthn and keychain signature envelopes as unsupported, and odd lengths as malformed', () => {
    expect(() => parseSignedTransaction(withSignature(signedVector.hex, `0x01${'11'.repeat(129)}`))).toThrow(
      'signature: a P-256 signature envelope is not supported',
    );
    expect(() => parseSignedTransaction(withSignature(signedVector.hex, `0x03${'11'.repeat(85)}`))).toThrow(
      'keychain',
    );
    expect(() => parseSignedTransaction(withSignature(signedVector.hex, `0x${'11'.repeat(64)}`))).toThrow(
      'signature: has 64 bytes',
    );
  });

  it('refuses the unsigned form, trailing bytes, and ox vectors it does not sign', () => {
    expect(() => parseSignedTransaction(parseUnsignedVector())).toThrow('the transaction is not signed');
    expect(() => parseSignedTransaction(hex(`${signedVector.hex}00`))).toThrow('trailing byte');
    for (const v of oxVectors.filter((x) => x.kind === 'unsupported')) {
      expect(() => parseSignedTransaction(hex(v.hex))).toThrow(CountersignError);
    }
  });

  it('never throws anything but CountersignError on random or mutated bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(), (bytes, at) => {
        for (const input of [
          Uint8Array.of(0x76, ...bytes),
          mutate(hex(signedVector.hex), at, bytes[0] ?? 0),
        ]) {
          try {
            parseSignedTransaction(input);
          } catch (e) {
            expect(e).toBeInstanceOf(CountersignError);
          }
        }
      }),
      { numRuns: 2000 },
    );
  });
});

function parseUnsignedVector(): Uint8Array {
  return hex(oxVectors.find((v) => v.kind === 'unsigned')!.hex);
}

function mutate(bytes: Uint8Array, at: number, value: number): Uint8Array {
  const out = bytes.slice();
  out[at % out.length] = value;
  return out;
}
