import { describe, expect, it } from 'vitest';
import { keccak256 } from 'ox/Hash';
import { CountersignError } from '../../src/shared/errors.js';
import { SECP256K1_N, signDigest } from '../../src/shared/secp256k1.js';
import {
  DEV_ADDRESS_0,
  DEV_ADDRESS_1,
  DEV_KEY_0,
  DEV_KEY_1,
  hex,
  oxVectors,
  to0x,
} from '../../test/vectors/tempo/vectors.js';
import { assemble } from './assemble.js';
import { feePayerDigest } from './feePayerDigest.js';
import { parseUnsignedTransaction } from './parseUnsignedTransaction.js';
import { senderDigest } from './senderDigest.js';
import { serializeUnsignedTransaction } from './serializeUnsignedTransaction.js';
import type { TempoSignature, TempoTransaction } from './types.js';
import { verifySignedTransaction } from './verifySignedTransaction.js';

function sign(digest: Uint8Array, key: string): TempoSignature {
  const { compact, recovery } = signDigest(digest, hex(key));
  return { r: compact.slice(0, 32), s: compact.slice(32), yParity: recovery };
}

const base = parseUnsignedTransaction(
  hex(oxVectors.find((v) => v.name === 'TxEnvelopeTempo: multiple calls')!.hex),
);
const TOKEN = hex('0x20c0000000000000000000000000000000000001');
const plain: TempoTransaction = { ...base, feeToken: TOKEN };
const sponsored: TempoTransaction = { ...base, feeToken: TOKEN, sponsored: true };
const OTHER = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';

function failure(run: () => unknown): string {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(CountersignError);
    expect((e as CountersignError).code).toBe('SIGNATURE_VERIFICATION_FAILED');
    return (e as CountersignError).message;
  }
  throw new Error('verification passed');
}

describe('verifySignedTransaction', () => {
  const unsigned = serializeUnsignedTransaction(plain);
  const signed = assemble(plain, sign(senderDigest(plain), DEV_KEY_0));

  it('returns keccak256(signed) and the EIP-55 signer, whatever the case of the expected address', () => {
    const result = verifySignedTransaction(signed, unsigned, DEV_ADDRESS_0.toLowerCase());
    expect(to0x(result.hash)).toBe(keccak256(to0x(signed)));
    expect(result.signer).toBe(DEV_ADDRESS_0);
    expect(result.feePayer).toBeUndefined();
  });

  it('accepts the signed ox vector against its unsigned vector', () => {
    const v = oxVectors.find((x) => x.kind === 'signed')!;
    const u = oxVectors.find((x) => x.name === 'TxEnvelopeTempo: authorizationList (empty)')!;
    expect(verifySignedTransaction(hex(v.hex), hex(u.hex), v.from!).signer.toLowerCase()).toBe(v.from);
  });

  it('refuses a wrong signer', () => {
    expect(failure(() => verifySignedTransaction(signed, unsigned, DEV_ADDRESS_1))).toContain(
      `recovers ${DEV_ADDRESS_0}, not the expected signer`,
    );
  });

  it('refuses a signed body that differs from the unsigned transaction', () => {
    const other = serializeUnsignedTransaction({ ...plain, nonce: plain.nonce + 1n });
    expect(failure(() => verifySignedTransaction(signed, other, DEV_ADDRESS_0))).toContain('body differs');
  });

  it('refuses a signature over another transaction', () => {
    const forged = assemble(plain, sign(senderDigest({ ...plain, gasLimit: 1n }), DEV_KEY_0));
    expect(failure(() => verifySignedTransaction(forged, unsigned, DEV_ADDRESS_0))).toContain(
      'not the expected signer',
    );
  });

  it('refuses a high-S signature', () => {
    const sig = sign(senderDigest(plain), DEV_KEY_0);
    const high = hex(`0x${(SECP256K1_N - BigInt(to0x(sig.s))).toString(16).padStart(64, '0')}`);
    const malleated = assemble(plain, { r: sig.r, s: high, yParity: 1 - sig.yParity });
    expect(failure(() => verifySignedTransaction(malleated, unsigned, DEV_ADDRESS_0))).toContain('high-S');
  });

  it('refuses bytes that do not parse, keeping the parse error as the cause', () => {
    expect(failure(() => verifySignedTransaction(unsigned, unsigned, DEV_ADDRESS_0))).toContain(
      'does not parse',
    );
    expect(failure(() => verifySignedTransaction(signed, unsigned, '0x1234'))).toContain('expected signer');
  });

  it('refuses a fee payer expectation on a transaction that is not sponsored', () => {
    expect(
      failure(() =>
        verifySignedTransaction(signed, unsigned, DEV_ADDRESS_0, { expectedFeePayer: DEV_ADDRESS_1 }),
      ),
    ).toContain('not sponsored');
  });

  describe('sponsored', () => {
    const sUnsigned = serializeUnsignedTransaction(sponsored);
    const senderSig = sign(senderDigest(sponsored), DEV_KEY_0);
    const full = assemble(sponsored, senderSig, sign(feePayerDigest(sponsored, DEV_ADDRESS_0), DEV_KEY_1));
    const handOff = assemble(sponsored, senderSig);

    it('recovers both the sender and the fee payer', () => {
      const r = verifySignedTransaction(full, sUnsigned, DEV_ADDRESS_0, { expectedFeePayer: DEV_ADDRESS_1 });
      expect(r.signer).toBe(DEV_ADDRESS_0);
      expect(r.feePayer).toBe(DEV_ADDRESS_1);
      expect(verifySignedTransaction(full, sUnsigned, DEV_ADDRESS_0).feePayer).toBe(DEV_ADDRESS_1);
    });

    it('refuses a different fee payer', () => {
      expect(
        failure(() => verifySignedTransaction(full, sUnsigned, DEV_ADDRESS_0, { expectedFeePayer: OTHER })),
      ).toContain(`recovers ${DEV_ADDRESS_1}, not the expected fee payer`);
    });

    it('refuses a fee payer that signed for another sender', () => {
      const wrong = assemble(sponsored, senderSig, sign(feePayerDigest(sponsored, OTHER), DEV_KEY_1));
      expect(
        failure(() =>
          verifySignedTransaction(wrong, sUnsigned, DEV_ADDRESS_0, { expectedFeePayer: DEV_ADDRESS_1 }),
        ),
      ).toContain('not the expected fee payer');
    });

    it('refuses a fee payer signature over another fee token', () => {
      const swapped = { ...sponsored, feeToken: hex(OTHER) };
      const wrong = assemble(swapped, senderSig, sign(feePayerDigest(sponsored, DEV_ADDRESS_0), DEV_KEY_1));
      expect(
        failure(() =>
          verifySignedTransaction(wrong, sUnsigned, DEV_ADDRESS_0, { expectedFeePayer: DEV_ADDRESS_1 }),
        ),
      ).toContain('not the expected fee payer');
    });

    it('refuses a sender that signed the unsponsored preimage', () => {
      const wrongSender = assemble(sponsored, sign(senderDigest(plain), DEV_KEY_0));
      expect(failure(() => verifySignedTransaction(wrongSender, sUnsigned, DEV_ADDRESS_0))).toContain(
        'not the expected signer',
      );
    });

    it('accepts the sender-signed hand-off unless a fee payer is expected', () => {
      expect(verifySignedTransaction(handOff, sUnsigned, DEV_ADDRESS_0).feePayer).toBeUndefined();
      expect(
        failure(() =>
          verifySignedTransaction(handOff, sUnsigned, DEV_ADDRESS_0, { expectedFeePayer: DEV_ADDRESS_1 }),
        ),
      ).toContain('has not signed');
    });
  });
});
