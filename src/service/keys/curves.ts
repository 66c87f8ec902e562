/** The curves and address formats the wallet service supports, as closed unions (Turnkey enum names). */

export const CURVES = ['CURVE_SECP256K1', 'CURVE_ED25519', 'CURVE_P256'] as const;
export type Curve = (typeof CURVES)[number];

export const ADDRESS_FORMATS = [
  'ADDRESS_FORMAT_UNCOMPRESSED',
  'ADDRESS_FORMAT_COMPRESSED',
  'ADDRESS_FORMAT_ETHEREUM',
  'ADDRESS_FORMAT_SOLANA',
  'ADDRESS_FORMAT_TRON',
  'ADDRESS_FORMAT_BITCOIN_MAINNET_P2PKH',
  'ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH',
  'ADDRESS_FORMAT_BITCOIN_MAINNET_P2TR',
  'ADDRESS_FORMAT_BITCOIN_TESTNET_P2PKH',
  'ADDRESS_FORMAT_BITCOIN_TESTNET_P2WPKH',
  'ADDRESS_FORMAT_BITCOIN_TESTNET_P2TR',
  'ADDRESS_FORMAT_BITCOIN_REGTEST_P2PKH',
  'ADDRESS_FORMAT_BITCOIN_REGTEST_P2WPKH',
  'ADDRESS_FORMAT_BITCOIN_REGTEST_P2TR',
  'ADDRESS_FORMAT_BITCOIN_SIGNET_P2PKH',
  'ADDRESS_FORMAT_BITCOIN_SIGNET_P2WPKH',
  'ADDRESS_FORMAT_BITCOIN_SIGNET_P2TR',
  'ADDRESS_FORMAT_DOGE_MAINNET',
  'ADDRESS_FORMAT_DOGE_TESTNET',
  'ADDRESS_FORMAT_COSMOS',
  'ADDRESS_FORMAT_SEI',
  'ADDRESS_FORMAT_APTOS',
  'ADDRESS_FORMAT_SUI',
  'ADDRESS_FORMAT_XLM',
  'ADDRESS_FORMAT_TON_V3R2',
  'ADDRESS_FORMAT_TON_V4R2',
] as const;
export type AddressFormat = (typeof ADDRESS_FORMATS)[number];

/** True when `v` is one of {@link CURVES}. */
export function isCurve(v: unknown): v is Curve {
  return typeof v === 'string' && (CURVES as readonly string[]).includes(v);
}

/** True when `v` is one of {@link ADDRESS_FORMATS}. */
export function isAddressFormat(v: unknown): v is AddressFormat {
  return typeof v === 'string' && (ADDRESS_FORMATS as readonly string[]).includes(v);
}

/** Whether an address of `format` can be made from a key on `curve` (Turnkey's curve/format table). */
export function curveFitsFormat(curve: Curve, format: AddressFormat): boolean {
  switch (format) {
    case 'ADDRESS_FORMAT_ETHEREUM':
    case 'ADDRESS_FORMAT_TRON':
    case 'ADDRESS_FORMAT_BITCOIN_MAINNET_P2PKH':
    case 'ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH':
    case 'ADDRESS_FORMAT_BITCOIN_MAINNET_P2TR':
    case 'ADDRESS_FORMAT_BITCOIN_TESTNET_P2PKH':
    case 'ADDRESS_FORMAT_BITCOIN_TESTNET_P2WPKH':
    case 'ADDRESS_FORMAT_BITCOIN_TESTNET_P2TR':
    case 'ADDRESS_FORMAT_BITCOIN_REGTEST_P2PKH':
    case 'ADDRESS_FORMAT_BITCOIN_REGTEST_P2WPKH':
    case 'ADDRESS_FORMAT_BITCOIN_REGTEST_P2TR':
    case 'ADDRESS_FORMAT_BITCOIN_SIGNET_P2PKH':
    case 'ADDRESS_FORMAT_BITCOIN_SIGNET_P2WPKH':
    case 'ADDRESS_FORMAT_BITCOIN_SIGNET_P2TR':
    case 'ADDRESS_FORMAT_DOGE_MAINNET':
    case 'ADDRESS_FORMAT_DOGE_TESTNET':
    case 'ADDRESS_FORMAT_COSMOS':
    // Sei's native bech32 address is the Cosmos one over a secp256k1 key (Turnkey's Sei page and
    // sdk-server's DEFAULT_SEI_ACCOUNTS); the ed25519 entry in Turnkey's older format table is not followed.
    case 'ADDRESS_FORMAT_SEI':
      return curve === 'CURVE_SECP256K1';
    case 'ADDRESS_FORMAT_SOLANA':
    case 'ADDRESS_FORMAT_APTOS':
    case 'ADDRESS_FORMAT_SUI':
    case 'ADDRESS_FORMAT_XLM':
    case 'ADDRESS_FORMAT_TON_V3R2':
    case 'ADDRESS_FORMAT_TON_V4R2':
      return curve === 'CURVE_ED25519';
    case 'ADDRESS_FORMAT_COMPRESSED':
      return curve === 'CURVE_SECP256K1' || curve === 'CURVE_P256' || curve === 'CURVE_ED25519';
    // An ed25519 key has no SEC1 uncompressed form.
    case 'ADDRESS_FORMAT_UNCOMPRESSED':
      return curve === 'CURVE_SECP256K1' || curve === 'CURVE_P256';
    default:
      return assertNever(format);
  }
}

/** Exhaustiveness check for `switch` over a closed union. */
export function assertNever(value: never): never {
  throw new Error(`unhandled case: ${String(value)}`);
}
