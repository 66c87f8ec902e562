/** fast-check generators of valid Tempo transactions (the model), shared by the property tests. */
import fc from 'fast-check';
import type { TempoTransaction } from '../../../chains/tempo/index.js';

const U64 = (1n << 64n) - 1n;
const U128 = (1n << 128n) - 1n;
const U256 = (1n << 256n) - 1n;
const uint = (max: bigint) =>
  fc.oneof(fc.constantFrom(0n, 1n, 0x7fn, 0x80n, max), fc.bigInt({ min: 0n, max: 0xffffffffn }), fc.bigInt({ min: 0n, max }));
const bytes = (n: number) => fc.uint8Array({ minLength: n, maxLength: n });
const address = bytes(20);

/**
 * Valid transactions. `oxSafe` keeps chain id and the validity bounds below 2^53, because ox holds
 * them as JavaScript numbers; the node's own limit is 2^64 - 1.
 */
export function arbitraryTransaction(oxSafe = true): fc.Arbitrary<TempoTransaction> {
  const small = oxSafe ? BigInt(Number.MAX_SAFE_INTEGER) : U64;
  const bound = fc.option(fc.bigInt({ min: 1n, max: small }), { nil: null });
  return fc
    .record({
      chainId: fc.oneof(fc.constantFrom(1n, 4217n, 42431n, 31337n), fc.bigInt({ min: 1n, max: small })),
      fees: fc.tuple(uint(U128), uint(U128)),
      gasLimit: uint(U64),
      calls: fc.array(
        fc.record({
          to: fc.option(address, { nil: null }),
          value: uint(U256),
          data: fc.uint8Array({ maxLength: 80 }),
        }),
        { minLength: 1, maxLength: 4 },
      ),
      accessList: fc.array(fc.record({ address, storageKeys: fc.array(bytes(32), { maxLength: 2 }) }), {
        maxLength: 2,
      }),
      nonceKey: uint(U256),
      nonce: uint(U64),
      bounds: fc.tuple(bound, bound),
      feeToken: fc.option(address, { nil: null }),
      sponsored: fc.boolean(),
    })
    .map(({ fees, bounds, ...r }) => {
      const [a, b] = fees;
      let [validBefore, validAfter] = bounds;
      if (validBefore !== null && validAfter !== null && validBefore <= validAfter) {
        if (validBefore < validAfter) [validBefore, validAfter] = [validAfter, validBefore];
        else if (validAfter > 1n) validAfter -= 1n;
        else validBefore += 1n;
      }
      return {
        ...r,
        maxFeePerGas: a > b ? a : b,
        maxPriorityFeePerGas: a > b ? b : a,
        validBefore,
        validAfter,
      };
    });
}
