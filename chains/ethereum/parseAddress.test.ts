import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { parseAddress } from './parseAddress.js';

const ADDR = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';

describe('parseAddress', () => {
  it.each([ADDR, ADDR.toLowerCase(), `0x${ADDR.slice(2).toUpperCase()}`])('accepts %s', (a) => {
    expect(Buffer.from(parseAddress(a, 'f')).toString('hex')).toBe(ADDR.slice(2).toLowerCase());
  });

  it.each([
    ['a wrong checksum', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD', 'checksum'],
    ['no 0x prefix', ADDR.slice(2), '0x-prefixed'],
    ['19 bytes', ADDR.slice(0, 40), '0x-prefixed'],
    ['21 bytes', `${ADDR}00`, '0x-prefixed'],
    ['non-hex', `0x${'g'.repeat(40)}`, '0x-prefixed'],
    ['an empty string', '', '0x-prefixed'],
  ])('rejects %s naming the field', (_n, value, reason) => {
    const run = () => parseAddress(value, 'ethereum.to');
    expect(run).toThrow(CountersignError);
    expect(run).toThrow(new RegExp(`^ethereum\\.to: .*${reason}`));
  });
});
