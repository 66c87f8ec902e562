import { sha256 } from '../../src/shared/sha256.js';
import { bech32, bech32m, createBase58check } from '@scure/base';
import { concatBytes } from '../../src/shared/encoding.js';
import { classifyScript, type ScriptType } from './script.js';
import type { BitcoinNetwork } from './types.js';

const base58check = createBase58check(sha256);

const PARAMS: Record<BitcoinNetwork, { hrp: string; p2pkh: number; p2sh: number }> = {
  mainnet: { hrp: 'bc', p2pkh: 0x00, p2sh: 0x05 },
  testnet: { hrp: 'tb', p2pkh: 0x6f, p2sh: 0xc4 },
  // Regtest shares testnet's base58 version bytes; only the bech32 prefix differs.
  regtest: { hrp: 'bcrt', p2pkh: 0x6f, p2sh: 0xc4 },
};

/**
 * The address an output script pays on `network` and its template: base58check for P2PKH/P2SH,
 * bech32 (BIP-173) for witness v0, bech32m (BIP-350) for v1+. OP_RETURN and non-standard scripts
 * have no address ('').
 */
export function addressFromScript(
  script: Uint8Array,
  network: BitcoinNetwork,
): { address: string; type: ScriptType } {
  const c = classifyScript(script);
  const p = PARAMS[network];
  switch (c.type) {
    case 'P2PKH':
      return { address: base58check.encode(concatBytes(Uint8Array.of(p.p2pkh), c.program)), type: c.type };
    case 'P2SH':
      return { address: base58check.encode(concatBytes(Uint8Array.of(p.p2sh), c.program)), type: c.type };
    case 'P2WPKH':
    case 'P2WSH':
      return { address: bech32.encode(p.hrp, [0, ...bech32.toWords(c.program)]), type: c.type };
    case 'P2TR':
    case 'WITNESS_UNKNOWN':
      return {
        address: bech32m.encode(p.hrp, [c.witnessVersion, ...bech32m.toWords(c.program)]),
        type: c.type,
      };
    case 'OP_RETURN':
    case 'NONSTANDARD':
      return { address: '', type: c.type };
    default: {
      const never: never = c.type;
      throw new Error(`unhandled script type ${String(never)}`);
    }
  }
}
