import { sha256 } from '../../src/shared/sha256.js';
import { bech32, bech32m, createBase58check } from '@scure/base';
import { invalid } from '../../src/shared/errors.js';
import { addressFromScript } from './addressFromScript.js';
import type { BitcoinNetwork } from './types.js';

const base58check = createBase58check(sha256);
const HRP: Record<BitcoinNetwork, string> = { mainnet: 'bc', testnet: 'tb', regtest: 'bcrt' };

function decodeOrUndefined(address: string, network: BitcoinNetwork): Uint8Array | undefined {
  const lower = address.toLowerCase();
  if (lower.startsWith(`${HRP[network]}1`)) {
    for (const codec of [bech32, bech32m]) {
      try {
        const { prefix, words } = codec.decode(address as `${string}1${string}`);
        const [version, ...rest] = words;
        if (prefix !== HRP[network] || version === undefined || version > 16) continue;
        // BIP-350: witness v0 uses bech32, v1+ bech32m.
        if ((version === 0) !== (codec === bech32)) continue;
        const program = codec.fromWords(rest);
        const op = version === 0 ? 0x00 : 0x50 + version;
        return Uint8Array.of(op, program.length, ...program);
      } catch {
        // try the other checksum
      }
    }
    return undefined;
  }
  let payload: Uint8Array;
  try {
    payload = base58check.decode(address);
  } catch {
    return undefined;
  }
  if (payload.length !== 21) return undefined;
  const hash = payload.subarray(1);
  // Build the candidate script and accept it only when it encodes back to the same address on `network`.
  for (const script of [
    Uint8Array.of(0x76, 0xa9, 0x14, ...hash, 0x88, 0xac),
    Uint8Array.of(0xa9, 0x14, ...hash, 0x87),
  ]) {
    if (addressFromScript(script, network).address === address) return script;
  }
  return undefined;
}

/** The scriptPubKey an address on `network` pays to (base58check P2PKH/P2SH, bech32/bech32m segwit). */
export function parseAddress(address: string, network: BitcoinNetwork, field: string): Uint8Array {
  const script = decodeOrUndefined(address, network);
  // Re-encoding must give the address back (bech32 in lower case): rejects bad program lengths and versions.
  const canonical = address.toLowerCase().startsWith(`${HRP[network]}1`) ? address.toLowerCase() : address;
  if (script === undefined || addressFromScript(script, network).address !== canonical) {
    throw invalid(field, `is not a valid Bitcoin ${network} address`);
  }
  return script;
}
