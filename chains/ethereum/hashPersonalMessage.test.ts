import fc from 'fast-check';
import { hashMessage } from 'viem';
import { describe, expect, it } from 'vitest';
import { eip191Vectors, hex, to0x } from '../../test/vectors/ethereum/vectors.js';
import { hashPersonalMessage } from './hashPersonalMessage.js';

describe('hashPersonalMessage (EIP-191 0x45)', () => {
  it.each(eip191Vectors.valid)('hashes $text$hex to the viem fixture', (v) => {
    const bytes = v.hex !== undefined ? hex(v.hex) : new TextEncoder().encode(v.text ?? '');
    expect(to0x(hashPersonalMessage(bytes))).toBe(v.digest);
  });

  it('agrees with viem hashMessage({raw}) on random bytes (length prefix in decimal)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (b) => {
        expect(to0x(hashPersonalMessage(b))).toBe(hashMessage({ raw: b }));
      }),
    );
  });
});
