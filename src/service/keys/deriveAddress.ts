/** Addresses from public keys, one encoding per Turnkey address format. */
import { ed25519 } from '@noble/curves/ed25519.js';
import { p256 } from '@noble/curves/nist.js';
import { blake2b } from '@noble/hashes/blake2.js';
import { ripemd160 } from '@noble/hashes/legacy.js';
import { sha256 } from '../../shared/sha256.js';
import { keccak_256, sha3_256 } from '@noble/hashes/sha3.js';
import { base32nopad, base58, bech32, bech32m, createBase58check } from '@scure/base';
import { bytesToHex, concatBytes, utf8 } from '../../shared/encoding.js';
import { invalid } from '../../shared/errors.js';
import { convertPublicKey, isValidPublicKey as isValidSecp256k1PublicKey } from '../../shared/secp256k1.js';
import { assertNever, curveFitsFormat, type AddressFormat, type Curve } from './curves.js';
import { crc16Xmodem } from './crc16Xmodem.js';
import { taprootOutputKey } from './taproot.js';
import { tonWalletAddress } from './tonWalletAddress.js';

const base58check = createBase58check(sha256);

type BitcoinNetwork = { readonly hrp: string; readonly p2pkhVersion: number };
const MAINNET: BitcoinNetwork = { hrp: 'bc', p2pkhVersion: 0x00 };
const TESTNET: BitcoinNetwork = { hrp: 'tb', p2pkhVersion: 0x6f };
// Regtest shares testnet's base58 version bytes; only the bech32 prefix differs.
const REGTEST: BitcoinNetwork = { hrp: 'bcrt', p2pkhVersion: 0x6f };
// Signet (BIP-325) uses testnet's version bytes and bech32 prefix alike.
const SIGNET: BitcoinNetwork = { hrp: 'tb', p2pkhVersion: 0x6f };

// Dogecoin's P2PKH version bytes (chainparams.cpp: base58Prefixes[PUBKEY_ADDRESS] = 30 / 113).
const DOGE_MAINNET_P2PKH = 0x1e;
const DOGE_TESTNET_P2PKH = 0x71;

/** SEC1 forms of a validated Weierstrass public key. */
interface SecKey {
  readonly compressed: Uint8Array;
  readonly uncompressed: Uint8Array;
}

function secKey(curve: 'CURVE_SECP256K1' | 'CURVE_P256', publicKey: Uint8Array, field: string): SecKey {
  if (publicKey.length !== 33 && publicKey.length !== 65) {
    throw invalid(field, 'public key must be a 33-byte compressed or 65-byte uncompressed SEC1 point');
  }
  if (curve === 'CURVE_SECP256K1') {
    if (!isValidSecp256k1PublicKey(publicKey)) throw invalid(field, 'public key is not a point on secp256k1');
    return {
      compressed: convertPublicKey(publicKey, true),
      uncompressed: convertPublicKey(publicKey, false),
    };
  }
  let point;
  try {
    point = p256.Point.fromBytes(publicKey);
  } catch {
    throw invalid(field, 'public key is not a point on P-256');
  }
  return { compressed: point.toBytes(true), uncompressed: point.toBytes(false) };
}

function ed25519Key(publicKey: Uint8Array, field: string): Uint8Array {
  if (publicKey.length !== 32) throw invalid(field, 'ed25519 public key must be 32 bytes');
  try {
    ed25519.Point.fromBytes(publicKey);
  } catch {
    throw invalid(field, 'public key is not a point on ed25519');
  }
  return publicKey;
}

function hash160(data: Uint8Array): Uint8Array {
  return ripemd160(sha256(data));
}

/** The 20-byte account id shared by Ethereum and Tron: keccak256(X ‖ Y)[12..32]. */
function keccakAccountId(uncompressed: Uint8Array): Uint8Array {
  return keccak_256(uncompressed.subarray(1)).subarray(12);
}

/** EIP-55: upper-case hex letter i when nibble i of keccak256(lower-case hex address) is ≥ 8. */
function eip55(accountId: Uint8Array): string {
  const lower = bytesToHex(accountId);
  const hash = keccak_256(utf8(lower));
  let out = '0x';
  for (let i = 0; i < lower.length; i++) {
    const byte = hash[i >> 1] as number;
    const nibble = i % 2 === 0 ? byte >> 4 : byte & 0x0f;
    const ch = lower[i] as string;
    out += nibble >= 8 ? ch.toUpperCase() : ch;
  }
  return out;
}

function bitcoinAddress(kind: 'P2PKH' | 'P2WPKH' | 'P2TR', net: BitcoinNetwork, key: SecKey): string {
  switch (kind) {
    case 'P2PKH':
      return base58check.encode(concatBytes(Uint8Array.of(net.p2pkhVersion), hash160(key.compressed)));
    // BIP-173: witness version 0, 20-byte program, bech32.
    case 'P2WPKH':
      return bech32.encode(net.hrp, [0, ...bech32.toWords(hash160(key.compressed))]);
    // BIP-350/BIP-86: witness version 1, 32-byte tweaked x-only key, bech32m.
    case 'P2TR':
      return bech32m.encode(net.hrp, [1, ...bech32m.toWords(taprootOutputKey(key.compressed))]);
    default:
      return assertNever(kind);
  }
}

/** Cosmos SDK account address: bech32(hrp, RIPEMD160(SHA256(compressed key))), as secp256k1 PubKey.Address gives it. */
function cosmosAddress(hrp: string, key: SecKey): string {
  return bech32.encode(hrp, bech32.toWords(hash160(key.compressed)));
}

/** Aptos: the authentication key SHA3-256(public key ‖ 0x00 single-ed25519 scheme), in AIP-40 long form. */
function aptosAddress(key: Uint8Array): string {
  return `0x${bytesToHex(sha3_256(concatBytes(key, Uint8Array.of(0x00))))}`;
}

/** Sui: 0x ‖ hex(BLAKE2b-256(flag 0x00 for ed25519 ‖ public key)). */
function suiAddress(key: Uint8Array): string {
  return `0x${bytesToHex(blake2b(concatBytes(Uint8Array.of(0x00), key), { dkLen: 32 }))}`;
}

/** Stellar StrKey (SEP-23): base32(version 6 << 3 ‖ public key ‖ CRC-16/XMODEM little-endian), "G…". */
function stellarAddress(key: Uint8Array): string {
  const body = concatBytes(Uint8Array.of(6 << 3), key);
  const crc = crc16Xmodem(body);
  return base32nopad.encode(concatBytes(body, Uint8Array.of(crc & 0xff, crc >> 8)));
}

/**
 * Encodes `publicKey` (as {@link publicKeyOf} returns it; 65-byte SEC1 is accepted too) on `curve` in
 * `format`. A curve that cannot have that format is CURVE_UNSUPPORTED; a malformed key FIELD_INVALID.
 */
export function deriveAddress(
  curve: Curve,
  publicKey: Uint8Array,
  format: AddressFormat,
  field: string,
): string {
  if (!curveFitsFormat(curve, format)) {
    throw invalid(field, `${format} is not available for ${curve} keys`, 'CURVE_UNSUPPORTED');
  }
  if (!(publicKey instanceof Uint8Array)) throw invalid(field, 'public key must be bytes');
  if (curve === 'CURVE_ED25519') {
    const key = ed25519Key(publicKey, field);
    switch (format) {
      case 'ADDRESS_FORMAT_SOLANA':
        return base58.encode(key);
      case 'ADDRESS_FORMAT_COMPRESSED':
        return bytesToHex(key);
      case 'ADDRESS_FORMAT_APTOS':
        return aptosAddress(key);
      case 'ADDRESS_FORMAT_SUI':
        return suiAddress(key);
      case 'ADDRESS_FORMAT_XLM':
        return stellarAddress(key);
      case 'ADDRESS_FORMAT_TON_V3R2':
        return tonWalletAddress('V3R2', key);
      case 'ADDRESS_FORMAT_TON_V4R2':
        return tonWalletAddress('V4R2', key);
      default:
        // curveFitsFormat admitted no other format for ed25519.
        throw invalid(field, `${format} is not available for ${curve} keys`, 'CURVE_UNSUPPORTED');
    }
  }
  const key = secKey(curve, publicKey, field);
  switch (format) {
    case 'ADDRESS_FORMAT_COMPRESSED':
      return bytesToHex(key.compressed);
    case 'ADDRESS_FORMAT_UNCOMPRESSED':
      return bytesToHex(key.uncompressed);
    case 'ADDRESS_FORMAT_ETHEREUM':
      return eip55(keccakAccountId(key.uncompressed));
    // Tron: base58check of 0x41 ‖ the Ethereum-style account id.
    case 'ADDRESS_FORMAT_TRON':
      return base58check.encode(concatBytes(Uint8Array.of(0x41), keccakAccountId(key.uncompressed)));
    case 'ADDRESS_FORMAT_BITCOIN_MAINNET_P2PKH':
      return bitcoinAddress('P2PKH', MAINNET, key);
    case 'ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH':
      return bitcoinAddress('P2WPKH', MAINNET, key);
    case 'ADDRESS_FORMAT_BITCOIN_MAINNET_P2TR':
      return bitcoinAddress('P2TR', MAINNET, key);
    case 'ADDRESS_FORMAT_BITCOIN_TESTNET_P2PKH':
      return bitcoinAddress('P2PKH', TESTNET, key);
    case 'ADDRESS_FORMAT_BITCOIN_TESTNET_P2WPKH':
      return bitcoinAddress('P2WPKH', TESTNET, key);
    case 'ADDRESS_FORMAT_BITCOIN_TESTNET_P2TR':
      return bitcoinAddress('P2TR', TESTNET, key);
    case 'ADDRESS_FORMAT_BITCOIN_REGTEST_P2PKH':
      return bitcoinAddress('P2PKH', REGTEST, key);
    case 'ADDRESS_FORMAT_BITCOIN_REGTEST_P2WPKH':
      return bitcoinAddress('P2WPKH', REGTEST, key);
    case 'ADDRESS_FORMAT_BITCOIN_REGTEST_P2TR':
      return bitcoinAddress('P2TR', REGTEST, key);
    case 'ADDRESS_FORMAT_BITCOIN_SIGNET_P2PKH':
      return bitcoinAddress('P2PKH', SIGNET, key);
    case 'ADDRESS_FORMAT_BITCOIN_SIGNET_P2WPKH':
      return bitcoinAddress('P2WPKH', SIGNET, key);
    case 'ADDRESS_FORMAT_BITCOIN_SIGNET_P2TR':
      return bitcoinAddress('P2TR', SIGNET, key);
    case 'ADDRESS_FORMAT_DOGE_MAINNET':
      return base58check.encode(concatBytes(Uint8Array.of(DOGE_MAINNET_P2PKH), hash160(key.compressed)));
    case 'ADDRESS_FORMAT_DOGE_TESTNET':
      return base58check.encode(concatBytes(Uint8Array.of(DOGE_TESTNET_P2PKH), hash160(key.compressed)));
    case 'ADDRESS_FORMAT_COSMOS':
      return cosmosAddress('cosmos', key);
    case 'ADDRESS_FORMAT_SEI':
      return cosmosAddress('sei', key);
    case 'ADDRESS_FORMAT_SOLANA':
    case 'ADDRESS_FORMAT_APTOS':
    case 'ADDRESS_FORMAT_SUI':
    case 'ADDRESS_FORMAT_XLM':
    case 'ADDRESS_FORMAT_TON_V3R2':
    case 'ADDRESS_FORMAT_TON_V4R2':
      throw invalid(field, `${format} is not available for ${curve} keys`, 'CURVE_UNSUPPORTED');
    default:
      return assertNever(format);
  }
}
