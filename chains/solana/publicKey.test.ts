import { PublicKey } from '@solana/web3.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodePublicKey, parsePublicKey } from './publicKey.js';

const SYSTEM_PROGRAM = '11111111111111111111111111111111';

describe('Solana public keys in base58', () => {
  it('agree with @solana/web3.js both ways, asked once and again (the second answer from the memo)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (key) => {
        const expected = new PublicKey(key).toBase58();
        for (let round = 0; round < 2; round++) {
          expect(encodePublicKey(key)).toBe(expected);
          expect(parsePublicKey(expected, 'k')).toEqual(key);
        }
      }),
    );
  });

  it('hands out fresh bytes, and encodes a view by its own 32 bytes', () => {
    const first = parsePublicKey(SYSTEM_PROGRAM, 'k');
    first.fill(7); // a caller that changes its copy does not change the next answer
    expect(parsePublicKey(SYSTEM_PROGRAM, 'k')).toEqual(new Uint8Array(32));
    const framed = new Uint8Array(40).fill(9);
    framed.fill(0, 4, 36);
    expect(encodePublicKey(framed.subarray(4, 36))).toBe(SYSTEM_PROGRAM);
    framed[35] = 1;
    expect(encodePublicKey(framed.subarray(4, 36))).toBe(new PublicKey(framed.subarray(4, 36)).toBase58());
  });

  it('still refuses, naming the field, what it has not decoded before', () => {
    parsePublicKey(SYSTEM_PROGRAM, 'k');
    expect(() => parsePublicKey(`${SYSTEM_PROGRAM}1`, 'solana.fee_payer')).toThrow(
      'solana.fee_payer: must be a base58 public key of 32 bytes, got 33',
    );
    expect(() => parsePublicKey('', 'solana.fee_payer')).toThrow('solana.fee_payer: is required');
    expect(() => parsePublicKey('0OIl', 'solana.fee_payer')).toThrow(
      'solana.fee_payer: is not a base58 string',
    );
  });
});
