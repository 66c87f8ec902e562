import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../shared/errors.js';
import { checkEthereumAbi, checkSolanaIdl } from './resources.js';

const F = 'parameters.smartContractInterface';

function refusal(fn: () => unknown): CountersignError {
  try {
    fn();
  } catch (e) {
    if (e instanceof CountersignError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('checkEthereumAbi', () => {
  it('accepts functions, events, errors, constructors, fallback/receive and nested tuples', () => {
    const abi = [
      { type: 'constructor', inputs: [{ name: 'owner', type: 'address' }] },
      { type: 'fallback' },
      { type: 'receive', stateMutability: 'payable' },
      {
        // `type` may be omitted: it defaults to function.
        name: 'swap',
        inputs: [
          {
            name: 'route',
            type: 'tuple[]',
            components: [
              { name: 'pool', type: 'address' },
              { name: 'fees', type: 'uint24[2]' },
              { name: 'data', type: 'bytes' },
            ],
          },
        ],
        outputs: [{ type: 'int256' }],
      },
      { type: 'event', name: 'Swapped', inputs: [{ name: 'id', type: 'bytes32', indexed: true }] },
      { type: 'error', name: 'Slippage', inputs: [] },
    ];
    expect(checkEthereumAbi(abi, F)).toBe(abi);
  });

  it.each([
    ['an object', { abi: [] }, 'must be a JSON array'],
    ['a non-object entry', [1], 'entry 0 must be an object'],
    ['an unknown entry type', [{ type: 'method', name: 'f' }], 'entry 0.type'],
    ['a function without a name', [{ type: 'function', inputs: [] }], 'entry 0.name'],
    [
      'a bad parameter type',
      [{ type: 'function', name: 'f', inputs: [{ type: 'uint7' }] }],
      'entry 0.inputs.0.type',
    ],
    ['bytes33', [{ type: 'event', name: 'E', inputs: [{ type: 'bytes33' }] }], 'entry 0.inputs.0.type'],
    [
      'a tuple without components',
      [{ type: 'function', name: 'f', inputs: [{ type: 'tuple' }] }],
      'entry 0.inputs.0.components',
    ],
    ['inputs not an array', [{ type: 'function', name: 'f', inputs: {} }], 'entry 0.inputs'],
    [
      'a non-string parameter name',
      [{ type: 'error', name: 'E', inputs: [{ name: 1, type: 'bool' }] }],
      'entry 0.inputs.0.name',
    ],
  ])('refuses %s, naming the field and where', (_what, abi, where) => {
    const e = refusal(() => checkEthereumAbi(abi, F));
    expect(e.code).toBe('FIELD_INVALID');
    expect(e.field).toBe(F);
    expect(e.message).toContain(where);
  });

  it('refuses tuples nested deeper than 32 levels with a field error, not a stack overflow', () => {
    const nested = (depth: number): unknown[] => {
      let param: Record<string, unknown> = { type: 'uint256' };
      for (let i = 0; i < depth; i++) param = { type: 'tuple', components: [param] };
      return [{ type: 'function', name: 'f', inputs: [param] }];
    };
    expect(checkEthereumAbi(nested(32), F)).toHaveLength(1);
    for (const depth of [33, 5_000]) {
      const e = refusal(() => checkEthereumAbi(nested(depth), F));
      expect(e.code).toBe('FIELD_INVALID');
      expect(e.field).toBe(F);
      expect(e.message).toMatch(/\.components nests tuples deeper than 32 levels$/);
    }
  });
});

describe('checkSolanaIdl', () => {
  it('accepts an object with instructions', () => {
    const idl = { name: 'p', instructions: [] };
    expect(checkSolanaIdl(idl, F)).toBe(idl);
  });

  it.each([
    ['an array', []],
    ['a string', 'idl'],
    ['null', null],
    ['instructions that are not an array', { instructions: {} }],
  ])('refuses %s', (_what, idl) => {
    const e = refusal(() => checkSolanaIdl(idl, F));
    expect(e.code).toBe('FIELD_INVALID');
    expect(e.field).toBe(F);
  });
});
