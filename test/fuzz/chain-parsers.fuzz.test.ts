/**
 * Fuzzing the strict parsers of the other chain adapters under fast-check (fixed seed, bounded runs
 * and a time budget each): Solana wire transactions, Tron `raw_data` protobuf, BIP-174 PSBTs and
 * Tempo 0x76 envelopes. Inputs are random bytes and mutations (byte flips, insertions, deletions,
 * truncations, splices) of valid transactions from the test vectors, so the fuzzer reaches past the
 * outer framing. Property: the parser either refuses with a CountersignError or accepts, and what it
 * accepts re-serializes to the very same bytes (no second encoding of one transaction).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parsePsbt, serializePsbt } from '../../chains/bitcoin/index.js';
import { parseWireTransaction, serializeWireTransaction } from '../../chains/solana/index.js';
import {
  parseUnsignedTransaction as parseTempo,
  serializeUnsignedTransaction as serializeTempo,
} from '../../chains/tempo/index.js';
import { parseRawData, serializeRawData } from '../../chains/tron/index.js';
import { isCountersignError } from '../../src/shared/errors.js';
import { mixedFixture } from '../vectors/bitcoin/vectors.js';
import { baseline, encodeRawMessage, key, rawWire } from '../vectors/solana/rawMessage.js';
import { hex as tempoHex, oxVectors } from '../vectors/tempo/vectors.js';
import { hex as tronHex, transactionVectors } from '../vectors/tron/vectors.js';

const SEED = 0x5eed16;
/** Per parser: runs, and a time budget after which the run stops (not a failure: a slow machine). */
const RUNS = 20_000;
const BUDGET_MS = 20_000;

const hexOf = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** Refused with our typed error, or accepted and re-serialized byte for byte; counts acceptances. */
function roundTripsOrRefuses<T>(parse: (b: Uint8Array) => T, serialize: (t: T) => Uint8Array) {
  const check = (bytes: Uint8Array): void => {
    let parsed: T;
    try {
      parsed = parse(bytes);
    } catch (e) {
      expect(isCountersignError(e), String(e)).toBe(true);
      return;
    }
    check.accepted++;
    expect(hexOf(serialize(parsed))).toBe(hexOf(bytes));
  };
  check.accepted = 0;
  return check;
}

type Mutation =
  | { kind: 'flip'; at: number; xor: number }
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'delete'; at: number; count: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'set'; at: number; value: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: fc.nat(),
    bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }),
  }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), count: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('set' as const),
    at: fc.nat(),
    value: fc.constantFrom(0x00, 0x01, 0x7f, 0x80, 0xff, 0xfd, 0xfe),
  }),
);

function mutate(seed: Uint8Array, mutations: readonly Mutation[]): Uint8Array {
  let b = Array.from(seed);
  for (const m of mutations) {
    const at = b.length === 0 ? 0 : m.at % (b.length + 1);
    switch (m.kind) {
      case 'flip':
        if (at < b.length) b[at] = (b[at] as number) ^ m.xor;
        break;
      case 'insert':
        b.splice(at, 0, ...m.bytes);
        break;
      case 'delete':
        b.splice(at, m.count);
        break;
      case 'truncate':
        b = b.slice(0, at);
        break;
      case 'set':
        if (at < b.length) b[at] = m.value;
        break;
      default: {
        const never: never = m;
        throw new Error(`unknown mutation ${String(never)}`);
      }
    }
  }
  return Uint8Array.from(b);
}

/** Random bytes, valid samples, and samples with one to four mutations. */
function inputs(samples: readonly Uint8Array[], maxLength: number): fc.Arbitrary<Uint8Array> {
  const sample = fc.constantFrom(...samples);
  return fc.oneof(
    { arbitrary: fc.uint8Array({ maxLength }), weight: 1 },
    { arbitrary: sample, weight: 1 },
    {
      arbitrary: fc
        .tuple(sample, fc.array(mutation, { minLength: 1, maxLength: 4 }))
        .map(([s, ms]) => mutate(s, ms)),
      weight: 8,
    },
  );
}

function fuzz(
  samples: readonly Uint8Array[],
  maxLength: number,
  check: ((b: Uint8Array) => void) & { accepted: number },
): void {
  // The samples themselves must be accepted, or the mutations would start from refused bytes.
  for (const s of samples) check(s);
  fc.assert(fc.property(inputs(samples, maxLength), check), {
    seed: SEED,
    numRuns: RUNS,
    interruptAfterTimeLimit: BUDGET_MS,
    markInterruptAsFailure: false,
  });
  // Mutants the parser accepted (beyond the samples): the round-trip property was exercised.
  expect(check.accepted).toBeGreaterThan(samples.length * 2);
}

describe('chain parser fuzz', () => {
  it('Solana wire transactions: refused with our error or round-tripped', () => {
    const legacy = baseline();
    const v0 = encodeRawMessage({
      ...legacy,
      versionByte: 0x80,
      lookups: [{ key: key(8), writable: [1], readonly: [0, 2] }],
    });
    const samples = [rawWire(encodeRawMessage(legacy), 2), rawWire(v0, 2)];
    const check = roundTripsOrRefuses(parseWireTransaction, serializeWireTransaction);
    for (const s of samples) expect(() => parseWireTransaction(s)).not.toThrow();
    fuzz(samples, 400, check);
  });

  it('Tron raw_data protobuf: refused with our error or round-tripped', () => {
    const samples = transactionVectors.transactions.map((t) => tronHex(t.rawDataHex));
    expect(samples.length).toBeGreaterThan(0);
    for (const s of samples) expect(() => parseRawData(s)).not.toThrow();
    fuzz(
      samples,
      400,
      roundTripsOrRefuses(parseRawData, (tx) => serializeRawData(tx)),
    );
  });

  it('PSBT (BIP-174): refused with our error or round-tripped', () => {
    const samples = [mixedFixture().psbt];
    for (const s of samples) expect(() => parsePsbt(s)).not.toThrow();
    fuzz(samples, 600, roundTripsOrRefuses(parsePsbt, serializePsbt));
  });

  it('Tempo 0x76 envelopes: refused with our error or round-tripped', () => {
    const samples = oxVectors.filter((v) => v.kind === 'unsigned').map((v) => tempoHex(v.hex));
    expect(samples.length).toBeGreaterThan(0);
    for (const s of samples) expect(() => parseTempo(s)).not.toThrow();
    fuzz(samples, 400, roundTripsOrRefuses(parseTempo, serializeTempo));
  });
});
