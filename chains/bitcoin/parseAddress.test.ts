import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { parseAddress } from './parseAddress.js';
import type { BitcoinNetwork } from './types.js';

/** BIP-350's segwit address vectors (test/vectors/bitcoin/extractBipVectors.ts). */
const vectors = JSON.parse(
  readFileSync(new URL('../../test/vectors/bitcoin/segwit-addresses.json', import.meta.url), 'utf8'),
) as { valid: [string, string][]; invalid: [string, string][] };

const NETWORKS: BitcoinNetwork[] = ['mainnet', 'testnet', 'regtest'];
const networkOf = (address: string): BitcoinNetwork =>
  address.toLowerCase().startsWith('bc1') ? 'mainnet' : 'testnet';

describe('parseAddress, BIP-350 segwit address vectors', () => {
  it('holds both lists', () => {
    expect(vectors.valid.length).toBeGreaterThanOrEqual(8);
    expect(vectors.invalid.length).toBeGreaterThanOrEqual(15);
  });

  it.each(vectors.valid)('%s pays to %s, on its network only', (address, script) => {
    const network = networkOf(address);
    expect(Buffer.from(parseAddress(address, network, 'outputs[0].address')).toString('hex')).toBe(script);
    for (const other of NETWORKS.filter((n) => n !== network)) {
      expect(() => parseAddress(address, other, 'outputs[0].address')).toThrow(CountersignError);
    }
  });

  it.each(vectors.invalid)('refuses %s (%s) on every network, naming the field', (address) => {
    for (const network of NETWORKS) {
      expect(() => parseAddress(address, network, 'outputs[0].address')).toThrow(
        `outputs[0].address: is not a valid Bitcoin ${network} address`,
      );
    }
  });
});
