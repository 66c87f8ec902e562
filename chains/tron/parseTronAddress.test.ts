import fc from 'fast-check';
import { TronWeb } from 'tronweb';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { toHex, transactionVectors } from '../../test/vectors/tron/vectors.js';
import { encodeTronAddress } from './encodeTronAddress.js';
import { parseTronAddress } from './parseTronAddress.js';

const SIGNER = transactionVectors.signer;
const SIGNER_HEX = '41f39fd6e51aad88f6f4ce6ab8827279cfffb92266';

describe('parseTronAddress', () => {
  it('parses base58check and 41-hex (any case) to the same 21 bytes', () => {
    expect(toHex(parseTronAddress(SIGNER, 'a'))).toBe(SIGNER_HEX);
    expect(toHex(parseTronAddress(SIGNER_HEX, 'a'))).toBe(SIGNER_HEX);
    expect(toHex(parseTronAddress(SIGNER_HEX.toUpperCase(), 'a'))).toBe(SIGNER_HEX);
  });

  it("agrees with tronweb's address codec on random addresses, both ways", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 20, maxLength: 20 }), (id) => {
        const h = `41${toHex(id)}`;
        const b58 = TronWeb.address.fromHex(h);
        expect(encodeTronAddress(parseTronAddress(h, 'a'))).toBe(b58);
        expect(toHex(parseTronAddress(b58, 'a'))).toBe(h);
      }),
    );
  });

  it.each([
    ['a wrong checksum', 'TYBNgWfhGuNzdLtjKtxXTfskAhTbMcqbaH', 'checksum'],
    ['an Ethereum address', '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266', 'must be'],
    ['0x41-prefixed hex', `0x${SIGNER_HEX}`, 'must be'],
    ['hex with another version byte', `a0${SIGNER_HEX.slice(2)}`, 'must be'],
    ['20-byte hex', SIGNER_HEX.slice(2), 'must be'],
    ['base58 not starting with T', '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2', 'must be'],
    ['base58 with a character outside the alphabet', 'TYBNgWfhGuNzdLtjKtxXTfskAhTbMcqba0', 'must be'],
    ['an empty string', '', 'must be'],
  ])('rejects %s, naming the field', (_name, value, message) => {
    let err: unknown;
    try {
      parseTronAddress(value, 'tron.to_address');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CountersignError);
    expect((err as CountersignError).code).toBe('FIELD_INVALID');
    expect((err as CountersignError).field).toBe('tron.to_address');
    expect((err as CountersignError).message).toContain(message);
  });

  it('rejects a valid base58check T… string whose payload has another version byte', () => {
    // base58check(0x40 ‖ ff…ff) and base58check(0x42 ‖ 00…00) both start with T and have 34 characters.
    for (const value of ['T9yD14Nj9j7xAB4dbGeiX9h8unkKB9nv2z', 'TZJozAg1ruapycCicgz31GxvYJ1G1qELV7']) {
      expect(() => parseTronAddress(value, 'f')).toThrow('f: does not decode to 21 bytes starting with 0x41');
    }
  });

  it('answers repeated addresses from its memo with fresh bytes, both ways', () => {
    const first = parseTronAddress(SIGNER, 'a');
    first.fill(0); // a caller that changes its copy does not change the next answer
    expect(toHex(parseTronAddress(SIGNER, 'a'))).toBe(SIGNER_HEX);
    // A view into a larger buffer encodes by its own 21 bytes (a memo keyed on the whole buffer would not).
    const framed = new Uint8Array(30);
    framed.set(Buffer.from(SIGNER_HEX, 'hex'), 5);
    expect(encodeTronAddress(framed.subarray(5, 26))).toBe(SIGNER);
    expect(encodeTronAddress(framed.subarray(5, 26))).toBe(SIGNER);
    framed[25] = (framed[25] ?? 0) ^ 1;
    expect(encodeTronAddress(framed.subarray(5, 26))).toBe(
      TronWeb.address.fromHex(toHex(framed.subarray(5, 26))),
    );
    // The same text with one character changed is decoded (and refused) on its own.
    const wrong = `${SIGNER.slice(0, -1)}${SIGNER.endsWith('a') ? 'b' : 'a'}`;
    expect(() => parseTronAddress(wrong, 'a')).toThrow('a: has a wrong base58check checksum');
  });

  it('encodeTronAddress refuses bytes that are not 0x41 ‖ 20 bytes', () => {
    expect(() => encodeTronAddress(new Uint8Array(21))).toThrow('must be 21 bytes starting with 0x41');
    expect(() => encodeTronAddress(Uint8Array.of(0x41))).toThrow('must be 21 bytes starting with 0x41');
  });
});
