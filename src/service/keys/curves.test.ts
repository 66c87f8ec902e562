import { describe, expect, it } from 'vitest';
import {
  ADDRESS_FORMATS,
  CURVES,
  curveFitsFormat,
  isAddressFormat,
  isCurve,
  type AddressFormat,
  type Curve,
} from './index.js';

describe('isCurve / isAddressFormat', () => {
  it('accepts every listed value and nothing else', () => {
    for (const c of CURVES) expect(isCurve(c)).toBe(true);
    for (const f of ADDRESS_FORMATS) expect(isAddressFormat(f)).toBe(true);
    // Turnkey formats countersign does not derive stay outside the union.
    for (const f of [
      'ADDRESS_FORMAT_BITCOIN_MAINNET_P2SH',
      'ADDRESS_FORMAT_BITCOIN_SIGNET_P2WSH',
      'ADDRESS_FORMAT_XRP',
    ])
      expect(isAddressFormat(f)).toBe(false);
    for (const v of ['curve_secp256k1', 'CURVE_SECP256R1', '', 1, null, undefined, {}, ['CURVE_P256']]) {
      expect(isCurve(v)).toBe(false);
      expect(isAddressFormat(v)).toBe(false);
    }
    expect(isCurve('ADDRESS_FORMAT_ETHEREUM')).toBe(false);
    expect(isAddressFormat('CURVE_ED25519')).toBe(false);
  });
});

describe('curveFitsFormat', () => {
  const table: Record<AddressFormat, Curve[]> = {
    ADDRESS_FORMAT_UNCOMPRESSED: ['CURVE_SECP256K1', 'CURVE_P256'],
    ADDRESS_FORMAT_COMPRESSED: ['CURVE_SECP256K1', 'CURVE_ED25519', 'CURVE_P256'],
    ADDRESS_FORMAT_ETHEREUM: ['CURVE_SECP256K1'],
    ADDRESS_FORMAT_SOLANA: ['CURVE_ED25519'],
    ADDRESS_FORMAT_TRON: ['CURVE_SECP256K1'],
    ADDRESS_FORMAT_BITCOIN_MAINNET_P2PKH: ['CURVE_SECP256K1'],
    ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH: ['CURVE_SECP256K1'],
    ADDRESS_FORMAT_BITCOIN_MAINNET_P2TR: ['CURVE_SECP256K1'],
    ADDRESS_FORMAT_BITCOIN_TESTNET_P2PKH: ['CURVE_SECP256K1'],
    ADDRESS_FORMAT_BITCOIN_TESTNET_P2WPKH: ['CURVE_SECP256K1'],
    ADDRESS_FORMAT_BITCOIN_TESTNET_P2TR: ['CURVE_SECP256K1'],
    ADDRESS_FORMAT_BITCOIN_REGTEST_P2PKH: ['CURVE_SECP256K1'],
    ADDRESS_FORMAT_BITCOIN_REGTEST_P2WPKH: ['CURVE_SECP256K1'],
    ADDRESS_FORMAT_BITCOIN_REGTEST_P2TR: ['CURVE_SECP256K1'],
    ADDRESS_FORMAT_BITCOIN_SIGNET_P2PKH: ['CURVE_SECP256K1'],
    ADDRESS_FORMAT_BITCOIN_SIGNET_P2WPKH: ['CURVE_SECP256K1'],
    ADDRESS_FORMAT_BITCOIN_SIGNET_P2TR: ['CURVE_SECP256K1'],
    ADDRESS_FORMAT_DOGE_MAINNET: ['CURVE_SECP256K1'],
    ADDRESS_FORMAT_DOGE_TESTNET: ['CURVE_SECP256K1'],
    ADDRESS_FORMAT_COSMOS: ['CURVE_SECP256K1'],
    ADDRESS_FORMAT_SEI: ['CURVE_SECP256K1'],
    ADDRESS_FORMAT_APTOS: ['CURVE_ED25519'],
    ADDRESS_FORMAT_SUI: ['CURVE_ED25519'],
    ADDRESS_FORMAT_XLM: ['CURVE_ED25519'],
    ADDRESS_FORMAT_TON_V3R2: ['CURVE_ED25519'],
    ADDRESS_FORMAT_TON_V4R2: ['CURVE_ED25519'],
  };
  for (const format of ADDRESS_FORMATS) {
    it(`allows ${format} exactly for ${table[format].join(', ')}`, () => {
      for (const curve of CURVES) expect(curveFitsFormat(curve, format)).toBe(table[format].includes(curve));
    });
  }
});
