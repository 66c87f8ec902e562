import { Transaction, TransactionInstruction, PublicKey, VersionedTransaction } from '@solana/web3.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CountersignError, type ErrorCode } from '../../src/shared/errors.js';
import { toHex } from '../../test/vectors/solana/keys.js';
import {
  baseline,
  encodeRawMessage,
  key,
  rawWire,
  type RawMessage,
} from '../../test/vectors/solana/rawMessage.js';
import { instructionMixes, web3Compile } from '../../test/vectors/solana/web3.js';
import { MALFORMED_CODE } from './malformed.js';
import { parseWireTransaction } from './parseWireTransaction.js';
import { serializeWireTransaction } from './serializeWireTransaction.js';

function expectRejected(bytes: Uint8Array, reason: string, code: ErrorCode = MALFORMED_CODE): void {
  let err: unknown;
  try {
    parseWireTransaction(bytes);
  } catch (e) {
    err = e;
  }
  expect(err, 'expected the parser to throw').toBeInstanceOf(CountersignError);
  expect((err as CountersignError).code).toBe(code);
  expect((err as CountersignError).message).toMatch(/^failed to pre-parse Solana transaction: /);
  expect((err as CountersignError).message).toContain(reason);
}

const wireOf = (m: RawMessage, count = m.header[0]) => rawWire(encodeRawMessage(m), count);

describe('parseWireTransaction', () => {
  it.each(instructionMixes)('round trips the web3.js unsigned wire transaction of "$name"', ({ fields }) => {
    const wire = new VersionedTransaction(web3Compile(fields)).serialize();
    const tx = parseWireTransaction(wire);
    expect(tx.message.version).toBe(
      fields.addressLookupTables?.length || fields.version === 'V0' ? 0 : 'legacy',
    );
    expect(tx.signatures.every((s) => s.every((b) => b === 0))).toBe(true);
    expect(toHex(tx.messageBytes)).toBe(toHex(web3Compile(fields).serialize()));
    expect(toHex(serializeWireTransaction(tx))).toBe(toHex(wire));
  });

  it('round trips a legacy web3.js Transaction serialized without signatures (as @turnkey/solana sends it)', () => {
    const mix = instructionMixes[2]!.fields;
    const tx = new Transaction({
      feePayer: new PublicKey(mix.feePayer),
      recentBlockhash: mix.recentBlockhash,
    });
    for (const ix of mix.instructions) {
      tx.add(
        new TransactionInstruction({
          programId: new PublicKey(ix.programId),
          keys: ix.accounts.map((a) => ({ ...a, pubkey: new PublicKey(a.pubkey) })),
          data: Buffer.from(ix.data),
        }),
      );
    }
    const wire = tx.serialize({ requireAllSignatures: false, verifySignatures: false });
    const parsed = parseWireTransaction(wire);
    expect(toHex(parsed.messageBytes)).toBe(toHex(tx.serializeMessage()));
    expect(parsed.signatures).toHaveLength(3);
    expect(toHex(serializeWireTransaction(parsed))).toBe(toHex(wire));
  });

  it('keeps signature slots as given', () => {
    const wire = wireOf(baseline());
    wire.fill(0xab, 1, 65);
    const tx = parseWireTransaction(wire);
    expect(tx.signatures[0]).toEqual(new Uint8Array(64).fill(0xab));
    expect(tx.signatures[1]).toEqual(new Uint8Array(64));
  });

  it('rejects every truncation of a valid transaction', () => {
    const wire = new VersionedTransaction(web3Compile(instructionMixes[5]!.fields)).serialize();
    for (let n = 0; n < wire.length; n++) {
      expect(() => parseWireTransaction(wire.subarray(0, n)), `length ${n}`).toThrow(CountersignError);
    }
  });

  it('rejects a trailing byte after the message', () => {
    expectRejected(Uint8Array.from([...wireOf(baseline()), 0]), 'trailing byte');
  });

  it('rejects a v0 message with a trailing byte after its lookups', () => {
    const wire = new VersionedTransaction(web3Compile(instructionMixes[5]!.fields)).serialize();
    expectRejected(Uint8Array.from([...wire, 0]), 'trailing byte');
  });

  it('rejects fewer signature slots than the header requires', () => {
    expectRejected(wireOf(baseline(), 1), '1 signature slot(s) but the message requires 2');
  });

  it('rejects more signature slots than the header requires', () => {
    expectRejected(wireOf(baseline(), 3), '3 signature slot(s) but the message requires 2');
  });

  it('rejects message versions other than legacy and v0 as an unsupported type', () => {
    expectRejected(
      wireOf({ ...baseline(), versionByte: 0x81, lookups: [] }),
      'version 1',
      'TRANSACTION_TYPE_UNSUPPORTED',
    );
  });

  it('rejects an account index beyond the accounts', () => {
    const m = baseline();
    m.instructions[0]!.accounts = [0, 4];
    expectRejected(wireOf(m), 'instructions[0].account_indexes[1]: 4 is out of range (4 accounts)');
  });

  it('rejects a program id index beyond the accounts', () => {
    const m = baseline();
    m.instructions[0]!.program = 7;
    expectRejected(wireOf(m), 'instructions[0].program_id_index: 7 is out of range');
  });

  it('rejects a program id taken from an address lookup table', () => {
    const m: RawMessage = {
      ...baseline(),
      versionByte: 0x80,
      lookups: [{ key: key(8), writable: [], readonly: [0] }],
    };
    m.instructions[0]!.program = 4;
    expectRejected(wireOf(m), 'a program id may not come from an address lookup table');
  });

  it('accepts an account index into a lookup table', () => {
    const m: RawMessage = {
      ...baseline(),
      versionByte: 0x80,
      lookups: [{ key: key(8), writable: [5], readonly: [6] }],
    };
    m.instructions[0]!.accounts = [4, 5];
    expect(parseWireTransaction(wireOf(m)).message.addressTableLookups).toHaveLength(1);
  });

  it.each<[string, (m: RawMessage) => void, string]>([
    [
      'the fee payer as a program',
      (m) => void (m.instructions[0]!.program = 0),
      'the fee payer cannot be a program',
    ],
    ['no signer', (m) => void (m.header = [0, 0, 1]), 'must be at least 1'],
    ['a read-only fee payer', (m) => void (m.header = [2, 2, 1]), 'must leave the fee payer writable'],
    ['a header needing more keys than present', (m) => void (m.header = [2, 1, 3]), 'needs 5 account keys'],
    ['a duplicate account key', (m) => void (m.keys[2] = key(1)), 'account_keys[2]: duplicates'],
  ])('rejects %s', (_name, mutate, reason) => {
    const m = baseline();
    mutate(m);
    expectRejected(wireOf(m), reason);
  });

  it('rejects a lookup that loads no account', () => {
    const m: RawMessage = {
      ...baseline(),
      versionByte: 0x80,
      lookups: [{ key: key(8), writable: [], readonly: [] }],
    };
    expectRejected(wireOf(m), 'loads no account');
  });

  it('rejects more than 256 accounts through lookups', () => {
    const many = Array.from({ length: 253 }, (_, i) => i);
    const m: RawMessage = {
      ...baseline(),
      versionByte: 0x80,
      lookups: [{ key: key(8), writable: many, readonly: [] }],
    };
    expectRejected(wireOf(m), '257 accounts exceed the limit of 256');
  });

  it('rejects a transaction above 1232 bytes', () => {
    const m = baseline();
    m.instructions[0]!.data = new Uint8Array(1100);
    expectRejected(wireOf(m), 'exceed the 1232-byte limit');
  });

  it('rejects an empty input and a signature count with nothing after it', () => {
    expectRejected(new Uint8Array(0), 'input is empty');
    expectRejected(Uint8Array.of(1), 'count 1 exceeds the bytes left');
  });

  it('throws only CountersignError on random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 1300 }), (bytes) => {
        try {
          parseWireTransaction(bytes);
        } catch (e) {
          expect(e).toBeInstanceOf(CountersignError);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('throws only CountersignError on a valid transaction with random byte edits', () => {
    const wire = new VersionedTransaction(web3Compile(instructionMixes[5]!.fields)).serialize();
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(wire.length - 1), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 4,
        }),
        (edits) => {
          const bad = wire.slice();
          for (const [at, value] of edits) bad[at] = value;
          try {
            parseWireTransaction(bad);
          } catch (e) {
            expect(e).toBeInstanceOf(CountersignError);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});
