import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { parseAuthorizationJson } from './parseAuthorizationJson.js';

const ADDR = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';

describe('parseAuthorizationJson', () => {
  it('parses what @turnkey/viem sends: JSON.stringify({address, chainId, nonce}) with numbers', () => {
    const a = parseAuthorizationJson(JSON.stringify({ address: ADDR, chainId: 1, nonce: 5 }), 'p');
    expect(a).toEqual({ chainId: 1n, address: new Uint8Array(Buffer.from(ADDR.slice(2), 'hex')), nonce: 5n });
  });

  it('accepts decimal and 0x-hex strings up to the EIP-7702 bounds', () => {
    const a = parseAuthorizationJson(
      JSON.stringify({
        address: ADDR.toLowerCase(),
        chainId: `0x${'ff'.repeat(32)}`,
        nonce: '18446744073709551615',
      }),
      'p',
    );
    expect(a.chainId).toBe((1n << 256n) - 1n);
    expect(a.nonce).toBe((1n << 64n) - 1n);
  });

  it.each([
    ['invalid JSON', '{', 'payload: is not valid JSON'],
    ['an array', '[]', 'payload: must be a JSON object'],
    ['a missing address', JSON.stringify({ chainId: 1, nonce: 0 }), 'payload.address: is required'],
    ['a missing chainId', JSON.stringify({ address: ADDR, nonce: 0 }), 'payload.chainId: is required'],
    ['a missing nonce', JSON.stringify({ address: ADDR, chainId: 1 }), 'payload.nonce: is required'],
    [
      'an unknown key',
      JSON.stringify({ address: ADDR, chainId: 1, nonce: 0, r: '0x' }),
      'payload.r: is not an authorization field',
    ],
    [
      'a bad checksum',
      JSON.stringify({ address: ADDR.replace('f39F', 'f39f'), chainId: 1, nonce: 0 }),
      'payload.address: mixed-case',
    ],
    ['a negative chainId', JSON.stringify({ address: ADDR, chainId: -1, nonce: 0 }), 'payload.chainId'],
    ['a fractional nonce', JSON.stringify({ address: ADDR, chainId: 1, nonce: 1.5 }), 'payload.nonce'],
    [
      'an unsafe-integer nonce',
      `{"address":"${ADDR}","chainId":1,"nonce":18446744073709551615}`,
      'payload.nonce: must be a non-negative safe integer',
    ],
    [
      'a nonce of 2^64',
      JSON.stringify({ address: ADDR, chainId: 1, nonce: '18446744073709551616' }),
      'payload.nonce: must be at most',
    ],
    [
      'a chainId with a leading zero',
      JSON.stringify({ address: ADDR, chainId: '01', nonce: 0 }),
      'payload.chainId',
    ],
    ['a boolean chainId', JSON.stringify({ address: ADDR, chainId: true, nonce: 0 }), 'payload.chainId'],
  ])('rejects %s with PAYLOAD_INVALID', (_n, json, message) => {
    let err: unknown;
    try {
      parseAuthorizationJson(json, 'payload');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CountersignError);
    expect((err as CountersignError).code).toBe('PAYLOAD_INVALID');
    expect((err as CountersignError).message).toContain(message);
  });
});
