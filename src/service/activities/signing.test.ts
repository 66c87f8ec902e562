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

  it('refuses a domain chainId typed as something else that is no integer, naming it', () => {
    const asString = [{ name: 'chainId', type: 'string' }];
    for (const chainId of ['mainnet', '-1', '0x', ' 1']) {
      const facts = () => eip712Facts(typedData({ chainId }, asString), 'parameters.payloads.0');
      expect(facts).toThrow(CountersignError);
      expect(facts).toThrow(/^parameters\.payloads\.0\.domain\.chainId: must be a non-negative integer/);
    }
    const declared = eip712Facts(typedData({ chainId: '0x89' }, asString), 'p').domain as {
      chain_id: bigint;
    };
    expect(declared.chain_id).toBe(137n);
  });

  it('holds only what the signature covers: undeclared domain fields and message members are left out', () => {
    const onlyName = [{ name: 'name', type: 'string' }];
    for (const chainId of [1, 'mainnet', 1.5, -1]) {
      const domain = { name: 'x', version: '2', chainId, verifyingContract: `0x${'Ab'.repeat(20)}` };
      expect(eip712Facts(typedData(domain, onlyName), 'p').domain).toEqual({
        name: 'x',
        version: '',
        chain_id: 0n,
        verifying_contract: '',
      });
    }
    const nested = JSON.stringify({
      types: {
        EIP712Domain: onlyName,
        Person: [{ name: 'wallet', type: 'address' }],
        Mail: [
          { name: 'from', type: 'Person' },
          { name: 'to', type: 'Person[]' },
        ],
      },
      primaryType: 'Mail',
      domain: { name: 'x' },
      message: {
        from: { wallet: `0x${'CD'.repeat(20)}`, amount: 1 },
        to: [{ wallet: `0x${'ef'.repeat(20)}`, amount: 2 }],
        amount: 3,
      },
    }).replace(/}}$/, `,"note":${'['.repeat(10_000)}${']'.repeat(10_000)}}}`);
    expect(eip712Facts(nested, 'p').message).toEqual({
      from: { wallet: `0x${'cd'.repeat(20)}` },
      to: [{ wallet: `0x${'ef'.repeat(20)}` }],
    });
  });
});
