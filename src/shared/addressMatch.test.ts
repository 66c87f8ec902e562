import { describe, expect, it } from 'vitest';
import { canonicalAddress, sameAddress } from './addressMatch.js';

describe('sameAddress', () => {
  it('matches hex addresses and public keys in any case', () => {
    const eth = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';
    expect(sameAddress(eth.toLowerCase(), eth)).toBe(true);
    expect(sameAddress(eth.toUpperCase().replace('0X', '0x'), eth)).toBe(true);
    expect(sameAddress('02ABCDEF', '02abcdef')).toBe(true);
  });

  it('matches bech32 written all upper or all lower case, never mixed (BIP-173)', () => {
    const bc = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
    expect(sameAddress(bc, bc)).toBe(true);
    expect(sameAddress(bc.toUpperCase(), bc)).toBe(true);
    expect(sameAddress(`BC1${bc.slice(3)}`, bc)).toBe(false);
  });

  it('matches base58 (Solana, Tron, legacy Bitcoin) only exactly: another case is another key', () => {
    const sol = 'GXBBurSwk5d6bg6LbMVstx1rfPsn8tWM4cVSbUduLXhg';
    expect(sameAddress(sol, sol)).toBe(true);
    expect(sameAddress(sol.toUpperCase(), sol)).toBe(false);
    expect(sameAddress(sol.toLowerCase(), sol)).toBe(false);
    const tron = 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8';
    expect(sameAddress(tron.toLowerCase(), tron)).toBe(false);
    // Base58 that happens to be all hex digits is still base58 (it never holds a 0).
    expect(sameAddress('1111111111111111111111111111111a', '1111111111111111111111111111111A')).toBe(false);
    const p2pkh = '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2';
    expect(sameAddress(p2pkh.toUpperCase(), p2pkh)).toBe(false);
  });

  it('never matches a different address', () => {
    expect(sameAddress('0xabc', '0xabd')).toBe(false);
    expect(sameAddress('', 'x')).toBe(false);
  });
});

describe('canonicalAddress', () => {
  const samples = [
    '0x8ba1f109551bD432803012645Ac136ddd64DBA72',
    '02ABCDEF',
    'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
    'BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4',
    'Bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
    'GXBBurSwk5d6bg6LbMVstx1rfPsn8tWM4cVSbUduLXhg',
    'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8',
    '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2',
  ];
  const spellings = (v: string) => [v, v.toLowerCase(), v.toUpperCase(), v.replace(/^0X/, '0x')];

  it('gives two spellings one form exactly when sameAddress takes them as one address', () => {
    for (const stored of samples.map((s) => (/^(0x|0|bc1)/i.test(s) ? s.toLowerCase() : s)))
      for (const requested of samples.flatMap(spellings))
        expect(canonicalAddress(requested) === canonicalAddress(stored), `${requested} / ${stored}`).toBe(
          sameAddress(requested, stored),
        );
  });
});
