import fc from 'fast-check';
import { getAddress } from 'viem';
import { describe, expect, it } from 'vitest';
import { checksumMemo, toChecksumAddress } from './toChecksumAddress.js';

describe('toChecksumAddress', () => {
  // The examples of the EIP-55 specification.
  it.each([
    '0x52908400098527886E0F7030069857D2E4169EE7',
    '0x8617E340B3D01FA5F11F306F4090FD50E238070D',
    '0xde709f2102306220921060314715629080e2fb77',
    '0x27b1fdb04752bbc536007a920d24acb045561c26',
    '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
    '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
    '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
  ])('encodes the EIP-55 example %s', (addr) => {
    expect(toChecksumAddress(Buffer.from(addr.slice(2), 'hex'))).toBe(addr);
  });

  it('agrees with viem getAddress on random addresses', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 20, maxLength: 20 }), (b) => {
        expect(toChecksumAddress(b)).toBe(getAddress(`0x${Buffer.from(b).toString('hex')}`));
      }),
    );
  });

  it('answers a memo hit with the same checksum as the first, uncached computation', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 20, maxLength: 20 }), (b) => {
        const expected = getAddress(`0x${Buffer.from(b).toString('hex')}`);
        expect(toChecksumAddress(b)).toBe(expected);
        const size = checksumMemo.size;
        // The same address again, from another buffer: a hit, so the memo does not grow.
        expect(toChecksumAddress(Uint8Array.from(b))).toBe(expected);
        expect(checksumMemo.size).toBe(size);
      }),
    );
  });

  it('keeps the memo within its bound', () => {
    const b = new Uint8Array(20);
    const view = new DataView(b.buffer);
    for (let i = 0; i < checksumMemo.limit + 100; i++) {
      view.setUint32(16, i);
      toChecksumAddress(b);
    }
    expect(checksumMemo.size).toBe(checksumMemo.limit);
    // An address dropped from the memo is computed again, the same as before.
    view.setUint32(16, 0);
    expect(toChecksumAddress(b)).toBe(getAddress(`0x${Buffer.from(b).toString('hex')}`));
  });
});
