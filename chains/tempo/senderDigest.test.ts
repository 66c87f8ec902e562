import fc from 'fast-check';
import { keccak256 } from 'ox/Hash';
import { TxEnvelopeTempo } from 'ox/tempo';
import { Transaction } from 'viem/tempo';
import { describe, expect, it } from 'vitest';
import { arbitraryTransaction } from '../../test/vectors/tempo/arbitraries.js';
import { to0x, toOx } from '../../test/vectors/tempo/vectors.js';
import { senderDigest } from './senderDigest.js';
import type { TempoTransaction } from './types.js';

/** The same transaction in viem's request shape (a local fee payer account marks sponsorship). */
function toViem(tx: TempoTransaction) {
  const ox = toOx(tx);
  return {
    chainId: ox.chainId,
    calls: ox.calls,
    accessList: ox.accessList,
    gas: ox.gas,
    maxFeePerGas: ox.maxFeePerGas,
    maxPriorityFeePerGas: ox.maxPriorityFeePerGas,
    nonce: Number(ox.nonce),
    nonceKey: ox.nonceKey,
    ...(ox.validBefore === undefined ? {} : { validBefore: ox.validBefore }),
    ...(ox.validAfter === undefined ? {} : { validAfter: ox.validAfter }),
    ...(ox.feeToken === undefined ? {} : { feeToken: ox.feeToken }),
    ...(tx.sponsored ? { feePayer: true as const } : {}),
  };
}

describe('senderDigest', () => {
  it('equals ox TxEnvelopeTempo.getSignPayload for random valid transactions', () => {
    fc.assert(
      fc.property(arbitraryTransaction(), (tx) => {
        expect(to0x(senderDigest(tx))).toBe(TxEnvelopeTempo.getSignPayload(toOx(tx)));
      }),
      { numRuns: 300 },
    );
  });

  it('equals keccak256 of viem/tempo Transaction.serialize for random valid transactions', async () => {
    await fc.assert(
      fc.asyncProperty(
        arbitraryTransaction().filter((tx) => tx.nonce <= BigInt(Number.MAX_SAFE_INTEGER)),
        async (tx) => {
          const unsigned = await Transaction.serialize(toViem(tx) as never);
          expect(to0x(senderDigest(tx))).toBe(keccak256(unsigned));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('does not depend on the fee token of a sponsored transaction', () => {
    fc.assert(
      fc.property(arbitraryTransaction(), fc.uint8Array({ minLength: 20, maxLength: 20 }), (tx, token) => {
        const s = { ...tx, sponsored: true };
        expect(senderDigest({ ...s, feeToken: token })).toEqual(senderDigest({ ...s, feeToken: null }));
      }),
      { numRuns: 50 },
    );
  });
});
