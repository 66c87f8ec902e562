import fc from 'fast-check';
import { Secp256k1, Signature } from 'ox';
import { SignatureEnvelope, TxEnvelopeTempo } from 'ox/tempo';
import { Account, Transaction } from 'viem/tempo';
import { describe, expect, it } from 'vitest';
import { signDigest } from '../../src/shared/secp256k1.js';
import { arbitraryTransaction } from '../../test/vectors/tempo/arbitraries.js';
import {
  DEV_ADDRESS_0,
  DEV_ADDRESS_1,
  DEV_KEY_0,
  DEV_KEY_1,
  hex,
  oxVectors,
  to0x,
  toOx,
} from '../../test/vectors/tempo/vectors.js';
import { assemble } from './assemble.js';
import { feePayerDigest } from './feePayerDigest.js';
import { parseUnsignedTransaction } from './parseUnsignedTransaction.js';
import { senderDigest } from './senderDigest.js';
import type { TempoSignature } from './types.js';

function sign(digest: Uint8Array, key: string): TempoSignature {
  const { compact, recovery } = signDigest(digest, hex(key));
  return { r: compact.subarray(0, 32), s: compact.subarray(32), yParity: recovery };
}

const oxSig = (s: TempoSignature) => ({ r: BigInt(to0x(s.r)), s: BigInt(to0x(s.s)), yParity: s.yParity });
const safeNonce = arbitraryTransaction().filter((tx) => tx.nonce <= BigInt(Number.MAX_SAFE_INTEGER));

describe('assemble', () => {
  it('reproduces the signed ox vector "with signature / secp256k1" from its unsigned form and the dev key', () => {
    const v = oxVectors.find((x) => x.kind === 'signed')!;
    const tx = parseUnsignedTransaction(
      hex(oxVectors.find((x) => x.name === 'TxEnvelopeTempo: authorizationList (empty)')!.hex),
    );
    expect(to0x(assemble(tx, sign(senderDigest(tx), DEV_KEY_0)))).toBe(v.hex);
  });

  it('signs with the native signer; ox deserializes the envelope and recovers the dev account', () => {
    fc.assert(
      fc.property(
        arbitraryTransaction().map((tx) => ({ ...tx, sponsored: false })),
        (tx) => {
          const sig = sign(senderDigest(tx), DEV_KEY_0);
          const signed = to0x(assemble(tx, sig));
          expect(signed).toBe(
            TxEnvelopeTempo.serialize(toOx(tx), { signature: SignatureEnvelope.from(oxSig(sig)) }),
          );
          const decoded = TxEnvelopeTempo.deserialize(signed as TxEnvelopeTempo.Serialized);
          expect(decoded.from?.toLowerCase()).toBe(DEV_ADDRESS_0.toLowerCase());
          expect(decoded.signature?.type).toBe('secp256k1');
        },
      ),
      { numRuns: 100 },
    );
  });

  it('equals viem/tempo Account.signTransaction', async () => {
    const account = Account.fromSecp256k1(DEV_KEY_0);
    await fc.assert(
      fc.asyncProperty(
        safeNonce.map((tx) => ({ ...tx, sponsored: false })),
        async (tx) => {
          const { type: _type, nonce, ...ox } = toOx(tx);
          const viaViem = await account.signTransaction({ ...ox, nonce: Number(nonce) } as never);
          expect(to0x(assemble(tx, sign(senderDigest(tx), DEV_KEY_0)))).toBe(viaViem);
        },
      ),
      { numRuns: 50 },
    );
  });

  it('sponsored: the sender and a second key as fee payer both recover, as ox and viem see it', async () => {
    const feePayerAccount = Account.fromSecp256k1(DEV_KEY_1);
    await fc.assert(
      fc.asyncProperty(
        safeNonce.map((tx) => ({ ...tx, sponsored: true })),
        async (tx) => {
          const senderSig = sign(senderDigest(tx), DEV_KEY_0);
          const feePayerSig = sign(feePayerDigest(tx, DEV_ADDRESS_0), DEV_KEY_1);
          const signed = to0x(assemble(tx, senderSig, feePayerSig));

          const decoded = TxEnvelopeTempo.deserialize(signed as TxEnvelopeTempo.Serialized);
          expect(decoded.from?.toLowerCase()).toBe(DEV_ADDRESS_0.toLowerCase());
          expect(decoded.feeToken === undefined ? undefined : String(decoded.feeToken).toLowerCase()).toBe(
            tx.feeToken === null ? undefined : to0x(tx.feeToken),
          );
          const payer = Secp256k1.recoverAddress({
            payload: TxEnvelopeTempo.getFeePayerSignPayload(decoded, { sender: DEV_ADDRESS_0 }),
            signature: Signature.from(decoded.feePayerSignature!),
          });
          expect(payer.toLowerCase()).toBe(DEV_ADDRESS_1.toLowerCase());

          // viem builds the same broadcast envelope when a local account pays the fee.
          const { type: _type, nonce, feePayerSignature: _f, ...ox } = toOx(tx);
          const viaViem = await Transaction.serialize(
            { ...ox, nonce: Number(nonce), feePayer: feePayerAccount, from: DEV_ADDRESS_0 } as never,
            { r: to0x(senderSig.r), s: to0x(senderSig.s), yParity: senderSig.yParity },
          );
          expect(signed).toBe(viaViem);
        },
      ),
      { numRuns: 50 },
    );
  });

  it('sponsored without the fee payer: the 0x00 hand-off ox reads as awaiting a fee payer', () => {
    const tx = {
      ...parseUnsignedTransaction(hex(oxVectors.find((x) => x.kind === 'unsigned')!.hex)),
      sponsored: true,
    };
    const withToken = { ...tx, feeToken: new Uint8Array(20).fill(0x20) };
    const signed = to0x(assemble(withToken, sign(senderDigest(withToken), DEV_KEY_0)));
    const decoded = TxEnvelopeTempo.deserialize(signed as TxEnvelopeTempo.Serialized);
    expect(decoded.feePayerSignature).toBeNull();
    expect(decoded.feeToken).toBeUndefined();
    expect(decoded.from?.toLowerCase()).toBe(DEV_ADDRESS_0.toLowerCase());
  });

  it('refuses a fee payer signature on a transaction that is not sponsored, and a bad y-parity', () => {
    const tx = parseUnsignedTransaction(hex(oxVectors.find((x) => x.kind === 'unsigned')!.hex));
    const sig = sign(senderDigest(tx), DEV_KEY_0);
    expect(() => assemble({ ...tx, sponsored: false }, sig, sig)).toThrow('fee_payer_signature');
    expect(() => assemble(tx, { ...sig, yParity: 2 })).toThrow('signature.v');
    expect(() => assemble(tx, { ...sig, r: new Uint8Array(33) })).toThrow('signature.r');
  });
});
