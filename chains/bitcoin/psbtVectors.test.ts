/**
 * The test vectors of BIP-174 (PSBT) and BIP-371 (its taproot fields), extracted by
 * test/vectors/bitcoin/extractBipVectors.ts: every invalid PSBT is refused with the field named,
 * every valid one parses and serializes back to the same bytes, and no key a signer-check case
 * names gets a signature planned.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { parsePsbt } from './parsePsbt.js';
import { serializePsbt } from './serializePsbt.js';
import { signingPlan } from './signingPlan.js';

interface Case {
  bip: number;
  name: string;
  base64: string;
}
const vectors = JSON.parse(
  readFileSync(new URL('../../test/vectors/bitcoin/psbt.json', import.meta.url), 'utf8'),
) as Record<'invalid' | 'valid' | 'signerRefuses', Case[]>;

const bytes = (c: Case) => new Uint8Array(Buffer.from(c.base64, 'base64'));
const named = (cases: Case[]) => cases.map((c) => [`BIP-${c.bip}: ${c.name}`, c] as const);

describe('BIP-174 and BIP-371 test vectors', () => {
  it('holds every group of both BIPs', () => {
    expect(vectors.invalid.filter((c) => c.bip === 174).length).toBeGreaterThanOrEqual(20);
    expect(vectors.invalid.filter((c) => c.bip === 371).length).toBeGreaterThanOrEqual(11);
    expect(vectors.valid.filter((c) => c.bip === 174).length).toBeGreaterThanOrEqual(10);
    expect(vectors.valid.filter((c) => c.bip === 371).length).toBeGreaterThanOrEqual(6);
    expect(vectors.signerRefuses.length).toBeGreaterThanOrEqual(4);
  });

  it.each(named(vectors.invalid))('refuses %s', (_, c) => {
    expect(() => parsePsbt(bytes(c))).toThrow(
      expect.objectContaining({ constructor: CountersignError, code: 'BITCOIN_MALFORMED_PSBT' }),
    );
  });

  it.each(named([...vectors.valid, ...vectors.signerRefuses]))('parses and re-serializes %s', (_, c) => {
    expect(Buffer.from(serializePsbt(parsePsbt(bytes(c)))).toString('base64')).toBe(c.base64);
  });

  // Their inputs are P2SH and P2WSH multisig, which this signer never signs; each key they name
  // is refused, with the reason, rather than signed.
  it.each(named(vectors.signerRefuses))('plans no signature for any key named in %s', (_, c) => {
    const psbt = parsePsbt(bytes(c));
    const keys = psbt.inputs.flatMap((i) => i.bip32Derivations.map((d) => d.pubkey));
    for (const publicKey of keys) {
      expect(() => signingPlan(psbt, { publicKey })).toThrow(
        /no input of the PSBT spends an output of this key/,
      );
    }
  });
});
