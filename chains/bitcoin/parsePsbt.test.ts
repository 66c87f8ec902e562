import fc from 'fast-check';
import * as bitcoin from 'bitcoinjs-lib';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { scriptArb, unsignedTxArb } from '../../test/helpers/bitcoin-arbitraries.js';
import {
  editPsbt,
  encodePsbt,
  hex,
  mixedFixture,
  PUB_A,
  toHex,
  type Maps,
} from '../../test/vectors/bitcoin/vectors.js';
import { parsePsbt } from './parsePsbt.js';
import { serializePsbt } from './serializePsbt.js';
import { serializeTransaction } from './serializeTransaction.js';

const fx = mixedFixture();

function expectInvalid(bytes: Uint8Array, message: string): void {
  let err: unknown;
  try {
    parsePsbt(bytes);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(CountersignError);
  expect((err as CountersignError).code).toBe('BITCOIN_MALFORMED_PSBT');
  expect((err as CountersignError).message).toMatch(/^failed to pre-parse Bitcoin transaction: /);
  expect((err as CountersignError).message).toContain(message);
}

describe('parsePsbt on the bitcoinjs-lib fixture', () => {
  const psbt = parsePsbt(fx.psbt);

  it('decodes the known fields', () => {
    expect(psbt.global.unsignedTx.inputs).toHaveLength(4);
    expect(psbt.inputs[0]!.nonWitnessUtxo?.outputs).toHaveLength(4);
    expect(psbt.inputs[1]!.witnessUtxo?.value).toBe(200_000n);
    expect(psbt.inputs[2]!.tapInternalKey).toHaveLength(32);
    expect(psbt.outputs).toHaveLength(2);
  });

  it('serializes back byte for byte', () => {
    expect(toHex(serializePsbt(psbt))).toBe(toHex(fx.psbt));
  });

  it('keeps unknown and proprietary pairs verbatim, in place', () => {
    const bytes = editPsbt(fx.psbt, (m) => {
      m.global.entries.push({ key: Uint8Array.of(0xfc, 3, 0x61, 0x62, 0x63), value: Uint8Array.of(9) });
      m.inputs[1]!.entries.unshift({ key: Uint8Array.of(0x42, 1), value: Uint8Array.of(1, 2) });
      m.outputs[1]!.entries.push({ key: Uint8Array.of(0x99), value: new Uint8Array(300) });
    });
    expect(toHex(serializePsbt(parsePsbt(bytes)))).toBe(toHex(bytes));
  });
});

describe('parsePsbt refusals', () => {
  it('rejects a wrong magic', () => {
    const bad = fx.psbt.slice();
    bad[4] = 0xfe;
    expectInvalid(bad, 'magic');
  });

  it('rejects every truncation', () => {
    for (let n = 0; n < fx.psbt.length; n += 7) {
      expect(() => parsePsbt(fx.psbt.subarray(0, n)), `length ${n}`).toThrow(CountersignError);
    }
    expectInvalid(fx.psbt.subarray(0, fx.psbt.length - 1), 'truncated');
  });

  it('rejects trailing bytes', () => {
    expectInvalid(Uint8Array.of(...fx.psbt, 0), 'trailing byte');
  });

  it('rejects duplicate keys', () => {
    expectInvalid(
      editPsbt(fx.psbt, (m) => m.inputs[1]!.entries.push({ ...m.inputs[1]!.entries[0]! })),
      'inputs[1]: duplicate key 0x01',
    );
  });

  it('rejects a non_witness_utxo whose txid does not match the prevout', () => {
    const other = bitcoin.Transaction.fromBuffer(fx.funding.toBuffer());
    other.locktime = 1;
    expectInvalid(
      editPsbt(fx.psbt, (m) => {
        m.inputs[0]!.entries = [{ key: Uint8Array.of(0x00), value: other.toBuffer() }];
      }),
      'inputs[0].non_witness_utxo: txid does not match',
    );
  });

  it('rejects a witness_utxo that disagrees with non_witness_utxo', () => {
    expectInvalid(
      editPsbt(fx.psbt, (m) => {
        m.inputs[0]!.entries.push({ key: Uint8Array.of(0x01), value: hex('a0860100000000000100') });
      }),
      'disagrees',
    );
  });

  it('rejects an unsigned transaction with a scriptSig or in segwit form', () => {
    const tx = bitcoin.Psbt.fromBuffer(fx.psbt).data.globalMap.unsignedTx.toBuffer();
    const withSig = bitcoin.Transaction.fromBuffer(tx);
    withSig.ins[0]!.script = Uint8Array.of(0x51);
    expectInvalid(
      editPsbt(fx.psbt, (m) => (m.global.entries[0]!.value = withSig.toBuffer())),
      'non-empty scriptSig',
    );
    const withWitness = bitcoin.Transaction.fromBuffer(tx);
    withWitness.ins[0]!.witness = [Uint8Array.of(1)];
    expect(() =>
      parsePsbt(editPsbt(fx.psbt, (m) => (m.global.entries[0]!.value = withWitness.toBuffer()))),
    ).toThrow(CountersignError);
  });

  it('rejects a missing unsigned transaction, PSBTv2 fields and version ≠ 0', () => {
    expectInvalid(hex('70736274ff00'), 'unsigned_tx: is missing');
    expectInvalid(
      editPsbt(fx.psbt, (m) => m.global.entries.push({ key: Uint8Array.of(0x04), value: Uint8Array.of(4) })),
      'PSBTv2-only',
    );
    expectInvalid(
      editPsbt(fx.psbt, (m) =>
        m.global.entries.push({ key: Uint8Array.of(0xfb), value: Uint8Array.of(2, 0, 0, 0) }),
      ),
      'PSBT version 2',
    );
  });

  it('rejects malformed known fields', () => {
    const cases: [number, { key: Uint8Array; value: Uint8Array }, string][] = [
      [1, { key: Uint8Array.of(0x03), value: Uint8Array.of(1, 0, 0) }, 'sighash_type'],
      [2, { key: Uint8Array.of(0x13), value: new Uint8Array(63) }, 'tap_key_sig'],
      [2, { key: Uint8Array.of(0x13), value: new Uint8Array(65) }, 'tap_key_sig'],
      [1, { key: Uint8Array.of(0x02, ...new Uint8Array(33)), value: Uint8Array.of(0x30, 1) }, 'partial_sig'],
      [1, { key: Uint8Array.of(0x08), value: Uint8Array.of(2, 1, 1) }, 'final_scriptwitness'],
      [0, { key: Uint8Array.of(0x00, 0x00), value: Uint8Array.of() }, 'type byte alone'],
    ];
    for (const [i, entry, message] of cases) {
      expectInvalid(
        editPsbt(fx.psbt, (m) => m.inputs[i]!.entries.push(entry)),
        message,
      );
    }
  });

  it('checks the script-path, preimage, merkle root, tap tree and xpub fields it keeps verbatim', () => {
    const control = (levels: number, first = 0xc0) =>
      Uint8Array.of(0x15, first, ...new Uint8Array(32 * (levels + 1)));
    const leaf = (depth: number, version = 0xc0) => [depth, version, 1, 0x51];
    const inputCases: [{ key: Uint8Array; value: Uint8Array }, string][] = [
      [{ key: Uint8Array.of(0x14, ...new Uint8Array(64)), value: new Uint8Array(64) }, ''],
      [{ key: Uint8Array.of(0x14, ...new Uint8Array(63)), value: new Uint8Array(64) }, 'tap_script_sig'],
      [
        { key: Uint8Array.of(0x14, ...new Uint8Array(64)), value: Uint8Array.of(...new Uint8Array(64), 0) },
        'tap_script_sig',
      ],
      [{ key: control(0), value: Uint8Array.of(0x51, 0xc0) }, ''],
      [{ key: control(128), value: Uint8Array.of(0x51, 0xc0) }, ''],
      [{ key: control(129), value: Uint8Array.of(0x51, 0xc0) }, 'tap_leaf_script'],
      [{ key: control(0).subarray(0, 33), value: Uint8Array.of(0x51, 0xc0) }, 'tap_leaf_script'],
      [{ key: control(0, 0xc1), value: Uint8Array.of(0x51, 0xc2) }, 'leaf version differs'],
      [{ key: control(0), value: Uint8Array.of() }, 'tap_leaf_script'],
      [{ key: Uint8Array.of(0x18), value: new Uint8Array(31) }, 'tap_merkle_root'],
      [{ key: Uint8Array.of(0x0a, ...new Uint8Array(32)), value: Uint8Array.of(1) }, 'ripemd160'],
      [{ key: Uint8Array.of(0x0b, ...new Uint8Array(20)), value: Uint8Array.of(1) }, 'sha256'],
      [{ key: Uint8Array.of(0x0c, ...new Uint8Array(20)), value: Uint8Array.of(1) }, ''],
      [{ key: Uint8Array.of(0x0d, ...new Uint8Array(20)), value: Uint8Array.of(1) }, 'hash256'],
    ];
    for (const [entry, message] of inputCases) {
      const bytes = editPsbt(fx.psbt, (m) => m.inputs[0]!.entries.push(entry));
      if (message === '') expect(serializePsbt(parsePsbt(bytes))).toEqual(bytes);
      else expectInvalid(bytes, message);
    }
    const treeCases: [number[], string][] = [
      [leaf(0), ''],
      [[...leaf(1), ...leaf(2), ...leaf(2)], ''],
      [[...leaf(2), ...leaf(2), ...leaf(1)], ''],
      [[], 'at least one leaf'],
      [leaf(1), 'complete tree'],
      [[...leaf(2), ...leaf(1), ...leaf(2)], 'complete tree'],
      [[...leaf(0), ...leaf(0)], 'past a complete tree'],
      [[...leaf(1, 0xc1), ...leaf(1)], 'is odd'],
      [[...leaf(129), ...leaf(129)], 'over 128'],
    ];
    for (const [value, message] of treeCases) {
      const bytes = editPsbt(fx.psbt, (m) =>
        m.outputs[0]!.entries.push({ key: Uint8Array.of(0x06), value: Uint8Array.from(value) }),
      );
      if (message === '') expect(serializePsbt(parsePsbt(bytes))).toEqual(bytes);
      else expectInvalid(bytes, message);
    }
    const xpub = (keyData: Uint8Array, value: Uint8Array) =>
      editPsbt(fx.psbt, (m) => m.global.entries.push({ key: Uint8Array.of(0x01, ...keyData), value }));
    const serialized = Uint8Array.of(...new Uint8Array(45), ...PUB_A); // BIP-32: 45 bytes, then the key
    expect(() => parsePsbt(xpub(serialized, new Uint8Array(12)))).not.toThrow();
    expectInvalid(xpub(new Uint8Array(78), new Uint8Array(12)), 'global.xpub'); // its key is no point
    expectInvalid(xpub(serialized, new Uint8Array(6)), 'global.xpub');
    expectInvalid(xpub(serialized.subarray(1), new Uint8Array(12)), 'global.xpub');
  });

  it('rejects a non-minimal CompactSize', () => {
    const bytes = Uint8Array.of(...fx.psbt.subarray(0, 5), 0xfd, 0x01, 0x00, ...fx.psbt.subarray(6));
    expectInvalid(bytes, 'not minimally encoded');
  });
});

const script = scriptArb();
const txArb = unsignedTxArb();
/** Unknown (0x20–0xfb minus v2 input types) and proprietary pairs, which the parser keeps verbatim. */
const unknownEntry = fc.record({
  key: fc
    .tuple(fc.integer({ min: 0x20, max: 0xfc }), fc.uint8Array({ maxLength: 8 }))
    .map(([t, rest]) => Uint8Array.of(t, ...rest)),
  value: fc.uint8Array({ maxLength: 300 }),
});
const witnessUtxo = fc.tuple(fc.bigInt({ min: 0n, max: 2_100_000_000_000_000n }), script).map(([v, s]) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(v);
  return { key: Uint8Array.of(0x01), value: Uint8Array.of(...b, s.length, ...s) };
});
const sighash = fc
  .nat({ max: 0xff })
  .map((t) => ({ key: Uint8Array.of(0x03), value: Uint8Array.of(t, 0, 0, 0) }));

function unique(entries: { key: Uint8Array; value: Uint8Array }[]): { key: Uint8Array; value: Uint8Array }[] {
  const seen = new Set<string>();
  return entries.filter((e) => (seen.has(toHex(e.key)) ? false : (seen.add(toHex(e.key)), true)));
}

const psbtArb = txArb.chain((tx) =>
  fc
    .record({
      global: fc.array(unknownEntry, { maxLength: 2 }),
      inputs: fc.tuple(
        ...tx.inputs.map(() =>
          fc.tuple(
            fc.option(witnessUtxo, { nil: undefined }),
            fc.option(sighash, { nil: undefined }),
            fc.array(unknownEntry, { maxLength: 2 }),
          ),
        ),
      ),
      outputs: fc.tuple(...tx.outputs.map(() => fc.array(unknownEntry, { maxLength: 2 }))),
    })
    .map((m): Maps => ({
      global: {
        entries: unique([
          { key: Uint8Array.of(0x00), value: serializeTransaction(tx, { witness: false }) },
          ...m.global,
        ]).filter((e) => e.key[0] !== 0xfb),
      },
      inputs: m.inputs.map(([w, s, u]) => ({
        entries: unique([...(w ? [w] : []), ...(s ? [s] : []), ...u]).filter(
          (e) =>
            !(e.key[0]! >= 0x0e && e.key[0]! <= 0x12) &&
            !(e.key.length === 1 ? false : [0x13, 0x17].includes(e.key[0]!)),
        ),
      })),
      outputs: m.outputs.map((u) => ({ entries: unique(u) })),
    })),
);

describe('parsePsbt properties', () => {
  it('parse ∘ serialize is the identity on generated PSBTs', () => {
    fc.assert(
      fc.property(psbtArb, (maps) => {
        const bytes = encodePsbt(maps);
        expect(toHex(serializePsbt(parsePsbt(bytes)))).toBe(toHex(bytes));
      }),
      { numRuns: 300 },
    );
  });

  it('random bytes only ever throw CountersignError', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), fc.boolean(), (bytes, withMagic) => {
        const input = withMagic ? Uint8Array.of(0x70, 0x73, 0x62, 0x74, 0xff, ...bytes) : bytes;
        try {
          parsePsbt(input);
        } catch (e) {
          expect(e).toBeInstanceOf(CountersignError);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('mutations of a real PSBT only ever throw CountersignError', () => {
    fc.assert(
      fc.property(fc.nat({ max: fx.psbt.length - 1 }), fc.nat({ max: 255 }), (at, byte) => {
        const bad = fx.psbt.slice();
        bad[at] = byte;
        try {
          expect(toHex(serializePsbt(parsePsbt(bad)))).toBe(toHex(bad));
        } catch (e) {
          expect(e).toBeInstanceOf(CountersignError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
