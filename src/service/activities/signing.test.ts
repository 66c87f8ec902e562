import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../shared/errors.js';
import { eip712Facts } from './signing.js';

/** Typed data with `domain`, its EIP712Domain type as given (absent: derived from the domain). */
const typedData = (domain: Record<string, unknown>, domainType?: unknown): string =>
  JSON.stringify({
    types: {
      ...(domainType === undefined ? {} : { EIP712Domain: domainType }),
      Mail: [{ name: 'contents', type: 'string' }],
    },
    primaryType: 'Mail',
    domain,
    message: { contents: 'hello' },
  });

describe('eip712Facts', () => {
  it('reads the domain chainId as a number, a decimal or a 0x-hex string, and 0 when absent', () => {
    const chainIdOf = (domain: Record<string, unknown>) =>
      (eip712Facts(typedData(domain), 'parameters.payload').domain as { chain_id: bigint }).chain_id;
    expect(chainIdOf({ name: 'x', chainId: 1 })).toBe(1n);
    expect(chainIdOf({ name: 'x', chainId: '0x89' })).toBe(137n);
    expect(chainIdOf({ name: 'x', chainId: '10' })).toBe(10n);
    expect(chainIdOf({ name: 'x' })).toBe(0n);
  });

  it('refuses a domain chainId that is no integer, naming it, when EIP712Domain types it otherwise or leaves it out', () => {
    const cases: [unknown, unknown][] = [
      [[{ name: 'chainId', type: 'string' }], 'mainnet'],
      [[{ name: 'name', type: 'string' }], 1.5],
      [[], '0x'],
      [[], -1],
    ];
    for (const [domainType, chainId] of cases) {
      const facts = () => eip712Facts(typedData({ name: 'x', chainId }, domainType), 'parameters.payloads.0');
      expect(facts).toThrow(CountersignError);
      expect(facts).toThrow(/^parameters\.payloads\.0\.domain\.chainId: must be a non-negative integer/);
    }
  });

  it('refuses a message nested deeper than 32 levels, in a member its type does not declare too, naming the message', () => {
    const withNote = (depth: number) =>
      typedData({ name: 'x' }).replace(/}}$/, `,"note":${'['.repeat(depth)}${']'.repeat(depth)}}}`);
    expect(eip712Facts(withNote(32), 'parameters.payload').message).toMatchObject({ contents: 'hello' });
    for (const depth of [33, 10_000]) {
      const facts = () => eip712Facts(withNote(depth), 'parameters.payload');
      expect(facts).toThrow(CountersignError);
      expect(facts).toThrow(/^parameters\.payload\.message: nests deeper than 32 levels$/);
    }
  });
});
