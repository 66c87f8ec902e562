import fc from 'fast-check';
import { hashTypedData, type TypedDataDefinition } from 'viem';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { eip712Vectors, to0x } from '../../test/vectors/ethereum/vectors.js';
import { hashTypedDataJson, typedDataDomainSeparator } from './hashTypedDataJson.js';

const etherMail = eip712Vectors.valid[0]!;
const mail = JSON.parse(etherMail.json) as {
  types: Record<string, { name: string; type: string }[]>;
  primaryType: string;
  domain: Record<string, unknown>;
  message: Record<string, unknown>;
};
const withMail = (change: (m: typeof mail) => void): string => {
  const m = structuredClone(mail);
  change(m);
  return JSON.stringify(m);
};

describe('hashTypedDataJson without types.EIP712Domain', () => {
  const domainArb = fc.record(
    {
      name: fc.string({ maxLength: 12 }),
      version: fc.string({ minLength: 1, maxLength: 6 }),
      chainId: fc.integer({ min: 1, max: 2 ** 31 }),
      verifyingContract: fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => to0x(b)),
      salt: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => to0x(b)),
    },
    { requiredKeys: [] },
  );
  const messageArb = fc.record({
    from: fc.string({ maxLength: 10 }),
    amount: fc.bigInt({ min: 0n, max: (1n << 256n) - 1n }),
    flag: fc.boolean(),
  });
  const types = {
    Note: [
      { name: 'from', type: 'string' },
      { name: 'amount', type: 'uint256' },
      { name: 'flag', type: 'bool' },
    ],
  };

  it('derives the domain type from the fields present, as viem does, and equals the explicit form', () => {
    fc.assert(
      fc.property(domainArb, messageArb, (domain, message) => {
        fc.pre(Object.keys(domain).length > 0);
        const json = JSON.stringify({
          types,
          primaryType: 'Note',
          domain,
          message: { ...message, amount: message.amount.toString() },
        });
        const ours = to0x(hashTypedDataJson(json, 'payload'));
        // viem derives EIP712Domain from the domain when types lacks it.
        expect(ours).toBe(
          hashTypedData({ types, primaryType: 'Note', domain, message } as TypedDataDefinition),
        );
        const order = ['name', 'version', 'chainId', 'verifyingContract', 'salt'] as const;
        const typeOf = {
          name: 'string',
          version: 'string',
          chainId: 'uint256',
          verifyingContract: 'address',
          salt: 'bytes32',
        };
        const explicit = order.filter((k) => k in domain).map((k) => ({ name: k, type: typeOf[k] }));
        const withType = JSON.stringify({
          types: { EIP712Domain: explicit, ...types },
          primaryType: 'Note',
          domain,
          message: { ...message, amount: message.amount.toString() },
        });
        expect(to0x(hashTypedDataJson(withType, 'payload'))).toBe(ours);
      }),
      { seed: 712, numRuns: 200 },
    );
  });

  it('uses an explicit empty EIP712Domain as given (a signature over the empty domain, on purpose)', () => {
    const json = JSON.stringify({
      types: { EIP712Domain: [], ...types },
      primaryType: 'Note',
      domain: {},
      message: { from: 'a', amount: '1', flag: true },
    });
    expect(to0x(hashTypedDataJson(json, 'payload'))).toBe(
      hashTypedData({
        types: { EIP712Domain: [], ...types },
        primaryType: 'Note',
        domain: {},
        message: { from: 'a', amount: 1n, flag: true },
      } as TypedDataDefinition),
    );
  });
});

describe('hashTypedDataJson vectors', () => {
  it('hashes the EIP-712 Ether Mail example to the published digest and domain separator', () => {
    expect(to0x(hashTypedDataJson(etherMail.json, 'payload'))).toBe(
      '0xbe609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2',
    );
    expect(to0x(typedDataDomainSeparator(etherMail.json, 'payload'))).toBe(
      '0xf2cee375fa42b42143804025fc449deafd50cc031ca257e0b194a650a912090f',
    );
  });

  it.each(eip712Vectors.valid)('$name matches the viem hashTypedData fixture', (v) => {
    expect(to0x(hashTypedDataJson(v.json, 'payload'))).toBe(v.digest);
    expect(to0x(hashTypedDataJson(v.json, 'payload'))).toBe(
      hashTypedData(JSON.parse(v.json) as TypedDataDefinition),
    );
  });

  it('hashes the domain from types.EIP712Domain as given, not from the domain keys', () => {
    // Declaring only `name` drops version/chainId/verifyingContract from the separator.
    const json = withMail((m) => {
      m.types['EIP712Domain'] = [{ name: 'name', type: 'string' }];
    });
    expect(to0x(hashTypedDataJson(json, 'payload'))).toBe(
      hashTypedData(JSON.parse(json) as TypedDataDefinition),
    );
    expect(to0x(hashTypedDataJson(json, 'payload'))).not.toBe(etherMail.digest);
  });

  it('accepts decimal-string and hex-string integers the same as numbers', () => {
    const dec = withMail((m) => (m.domain['chainId'] = '1'));
    const hx = withMail((m) => (m.domain['chainId'] = '0x1'));
    expect(to0x(hashTypedDataJson(dec, 'p'))).toBe(etherMail.digest);
    expect(to0x(hashTypedDataJson(hx, 'p'))).toBe(etherMail.digest);
  });

  it('agrees with viem on random messages of every integer width and bytesN', () => {
    const widths = fc.integer({ min: 1, max: 32 });
    fc.assert(
      fc.property(
        widths,
        widths,
        fc.boolean(),
        fc.string(),
        fc.uint8Array({ maxLength: 40 }),
        fc.nat(),
        (ub, nb, flag, text, blob, seed) => {
          const uBits = BigInt(ub * 8);
          const iBits = BigInt(nb * 8);
          const u = BigInt(seed) % (1n << uBits);
          const i = (BigInt(seed) % (1n << (iBits - 1n))) * (seed % 2 === 0 ? 1n : -1n);
          const n = (seed % 32) + 1;
          const fixed = `0x${Buffer.alloc(n, seed % 256).toString('hex')}`;
          const data = {
            types: {
              EIP712Domain: [{ name: 'name', type: 'string' }],
              T: [
                { name: 'u', type: `uint${uBits}` },
                { name: 'i', type: `int${iBits}` },
                { name: 'f', type: 'bool' },
                { name: 't', type: 'string' },
                { name: 'b', type: 'bytes' },
                { name: 'x', type: `bytes${n}` },
                { name: 'l', type: 'int256[]' },
              ],
            },
            primaryType: 'T',
            domain: { name: text },
            message: {
              u: u.toString(),
              i: i.toString(),
              f: flag,
              t: text,
              b: to0x(blob),
              x: fixed,
              l: [i.toString(), '-1', 0],
            },
          };
          const viem = hashTypedData({
            ...data,
            message: { ...data.message, u, i, l: [i, -1n, 0n] },
          } as unknown as TypedDataDefinition);
          expect(to0x(hashTypedDataJson(JSON.stringify(data), 'p'))).toBe(viem);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('hashTypedDataJson rejects with EIP712_INVALID', () => {
  it.each([
    ['invalid JSON', '{', 'payload: is not valid JSON'],
    [
      'a missing types.EIP712Domain with an empty domain (dropped on the way)',
      withMail((m) => {
        delete m.types['EIP712Domain'];
        m.domain = {};
      }),
      'payload.types.EIP712Domain: is missing and the domain is empty: the domain was most likely dropped',
    ],
    [
      'a domain field outside the canonical five without a declared type',
      withMail((m) => {
        delete m.types['EIP712Domain'];
        m.domain['foo'] = 'x';
      }),
      'payload.domain.foo: is not one of name, version, chainId, verifyingContract, salt',
    ],
    ['an undeclared primaryType', withMail((m) => (m.primaryType = 'Letter')), 'payload.primaryType'],
    [
      'an unknown member type',
      withMail((m) => (m.types['Person']![0]!.type = 'str')),
      "payload.types.Person[0].type: 'str'",
    ],
    [
      'uint with no width',
      withMail((m) => (m.types['Person']![0]!.type = 'uint')),
      'payload.types.Person[0].type',
    ],
    ['uint7', withMail((m) => (m.types['Person']![0]!.type = 'uint7')), 'payload.types.Person[0].type'],
    ['bytes33', withMail((m) => (m.types['Person']![0]!.type = 'bytes33')), 'payload.types.Person[0].type'],
    [
      'a duplicate member',
      withMail((m) => m.types['Person']!.push({ name: 'name', type: 'string' })),
      'duplicates',
    ],
    [
      'a missing message field',
      withMail((m) => delete (m.message['from'] as Record<string, unknown>)['wallet']),
      'payload.message.from.wallet: is missing',
    ],
    [
      'a missing domain field',
      withMail((m) => delete m.domain['chainId']),
      'payload.domain.chainId: is missing',
    ],
    [
      'a bad address checksum',
      withMail(
        (m) =>
          ((m.message['to'] as Record<string, unknown>)['wallet'] =
            '0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbb'),
      ),
      'payload.message.to.wallet',
    ],
    [
      'a number where a string is declared',
      withMail((m) => (m.message['contents'] = 5)),
      'payload.message.contents: must be a string',
    ],
    [
      'a negative uint',
      withMail((m) => (m.domain['chainId'] = -1)),
      'payload.domain.chainId: is out of range',
    ],
    [
      'an unsafe integer number',
      withMail((m) => (m.domain['chainId'] = 2 ** 60)),
      'payload.domain.chainId: must be a safe integer',
    ],
    [
      'a struct given as a string',
      withMail((m) => (m.message['from'] = 'Cow')),
      'payload.message.from: must be an object',
    ],
  ])('%s', (_n, json, message) => {
    let err: unknown;
    try {
      hashTypedDataJson(json, 'payload');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CountersignError);
    expect((err as CountersignError).code).toBe('EIP712_INVALID');
    expect((err as CountersignError).message).toContain(message);
  });

  const typed = (types: Record<string, { name: string; type: string }[]>, message: unknown) =>
    JSON.stringify({ types: { EIP712Domain: [], ...types }, primaryType: 'T', domain: {}, message });

  it.each([
    [
      'a fixed array of the wrong length',
      typed({ T: [{ name: 'a', type: 'uint8[2]' }] }, { a: [1] }),
      'payload.message.a: must have exactly 2',
    ],
    [
      'an int8 out of range',
      typed({ T: [{ name: 'a', type: 'int8' }] }, { a: 128 }),
      'payload.message.a: is out of range for int8',
    ],
    [
      'bytes4 of 3 bytes',
      typed({ T: [{ name: 'a', type: 'bytes4' }] }, { a: '0xaabbcc' }),
      'payload.message.a: must be a 0x-prefixed hex string of exactly 4',
    ],
    ['odd-length bytes', typed({ T: [{ name: 'a', type: 'bytes' }] }, { a: '0xabc' }), 'payload.message.a'],
    [
      'a string for bool',
      typed({ T: [{ name: 'a', type: 'bool' }] }, { a: 'true' }),
      'payload.message.a: must be true or false',
    ],
    [
      'an array element of the wrong type',
      typed({ T: [{ name: 'a', type: 'string[]' }] }, { a: ['x', 1] }),
      'payload.message.a[1]',
    ],
    ['an invalid type name', typed({ 'T x': [] }, {}), 'payload.types.T x'],
    ['an atomic type name used as a struct name', typed({ T: [], uint256: [] }, {}), 'payload.types.uint256'],
  ])('%s', (_n, json, message) => {
    expect(() => hashTypedDataJson(json, 'payload')).toThrow(message);
  });

  it('bounds recursion on deeply nested values', () => {
    let value: unknown = { children: [] };
    for (let i = 0; i < 100; i++) value = { children: [value] };
    const json = JSON.stringify({
      types: { EIP712Domain: [], T: [{ name: 'children', type: 'T[]' }] },
      primaryType: 'T',
      domain: {},
      message: value,
    });
    expect(() => hashTypedDataJson(json, 'payload')).toThrow(/nests deeper/);
  });

  it('random strings never throw anything but CountersignError', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (s) => {
        try {
          hashTypedDataJson(s, 'p');
        } catch (e) {
          expect(e).toBeInstanceOf(CountersignError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('hashTypedDataJson on many struct types', () => {
  it('hashes a chain of thousands of struct types without recursing once per type (viem agrees on a short one)', () => {
    const chain = (n: number) => {
      const types: Record<string, { name: string; type: string }[]> = { EIP712Domain: [] };
      for (let i = 0; i < n; i++)
        types[`T${i}`] = [
          { name: 'v', type: 'uint8' },
          ...(i + 1 < n ? [{ name: 'next', type: `T${i + 1}[]` }] : []),
        ];
      return { types, primaryType: 'T0', domain: {}, message: { v: 7, next: [] } };
    };
    const short = chain(40);
    expect(to0x(hashTypedDataJson(JSON.stringify(short), 'payload'))).toBe(
      hashTypedData(short as unknown as TypedDataDefinition),
    );
    expect(hashTypedDataJson(JSON.stringify(chain(10_000)), 'payload')).toHaveLength(32);
  });
});
