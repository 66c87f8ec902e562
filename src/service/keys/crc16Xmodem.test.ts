import { describe, expect, it } from 'vitest';
import { crc16Xmodem } from './crc16Xmodem.js';

describe('crc16Xmodem', () => {
  it('gives the catalogued check value 0x31c3 for "123456789" and 0 for no bytes', () => {
    // Reveng CRC catalogue, CRC-16/XMODEM: check = 0x31c3.
    expect(crc16Xmodem(new TextEncoder().encode('123456789'))).toBe(0x31c3);
    expect(crc16Xmodem(new Uint8Array(0))).toBe(0);
  });
});
