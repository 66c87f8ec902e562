import fc from 'fast-check';
import { hashAuthorization as viemHashAuthorization } from 'viem/utils';
import { describe, expect, it } from 'vitest';
import { eip7702Vectors, to0x } from '../../test/vectors/ethereum/vectors.js';
import { hashAuthorization } from './hashAuthorization.js';
import { parseAuthorizationJson } from './parseAuthorizationJson.js';

describe('hashAuthorization (EIP-7702)', () => {
  it.each(eip7702Vectors.valid)('hashes $json to the viem fixture', (v) => {
    expect(to0x(hashAuthorization(parseAuthorizationJson(v.json, 'payload')))).toBe(v.digest);
  });

  it('agrees with viem hashAuthorization on random tuples', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 20, maxLength: 20 }),
        fc.bigInt({ min: 0n, max: (1n << 256n) - 1n }),
        fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
        (address, chainId, nonce) => {
          expect(to0x(hashAuthorization({ chainId, address, nonce }))).toBe(
            // viem types these as numbers but encodes bigints identically.
            viemHashAuthorization({
              address: to0x(address),
              chainId: chainId as unknown as number,
              nonce: nonce as unknown as number,
            }),
          );
        },
      ),
    );
  });
});
