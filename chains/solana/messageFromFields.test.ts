import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CountersignError, type ErrorCode } from '../../src/shared/errors.js';
import { testSigner, toHex } from '../../test/vectors/solana/keys.js';
import {
  BLOCKHASH,
  fixedKey,
  instructionMixes,
  SYSTEM_PROGRAM,
  systemTransferData,
  web3Compile,
} from '../../test/vectors/solana/web3.js';
import { messageFromFields } from './messageFromFields.js';
import { serializeMessage } from './serializeMessage.js';
import type { SolanaTransactionFields } from './types.js';

const A = testSigner(0).address;
const B = testSigner(1).address;

function transfer(from: string, to: string): SolanaTransactionFields['instructions'][number] {
  return {
    programId: SYSTEM_PROGRAM,
    accounts: [
      { pubkey: from, isSigner: true, isWritable: true },
      { pubkey: to, isSigner: false, isWritable: true },
    ],
    data: systemTransferData(1n),
  };
}

const simple = (over: Partial<SolanaTransactionFields> = {}): SolanaTransactionFields => ({
  feePayer: A,
  recentBlockhash: BLOCKHASH,
  instructions: [transfer(A, B)],
  ...over,
});

function expectFieldError(
  fields: SolanaTransactionFields,
  field: string,
  reason: string,
  code: ErrorCode = 'FIELD_INVALID',
) {
  let err: unknown;
  try {
    messageFromFields(fields);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(CountersignError);
  expect((err as CountersignError).code).toBe(code);
  expect((err as CountersignError).field).toBe(field);
  expect((err as CountersignError).message).toContain(reason);
}

const pool = [A, B, testSigner(2).address, ...Array.from({ length: 7 }, (_, i) => fixedKey(i + 1))];
const poolKey = fc.constantFrom(...pool);

/** Random instruction mixes over a small key pool, so keys repeat across roles and tables. */
const randomFields: fc.Arbitrary<SolanaTransactionFields> = fc
  .record({
    feePayer: poolKey,
    instructions: fc.array(
      fc.record({
        programId: poolKey,
        accounts: fc.array(fc.record({ pubkey: poolKey, isSigner: fc.boolean(), isWritable: fc.boolean() }), {
          maxLength: 6,
        }),
        data: fc.uint8Array({ maxLength: 16 }),
      }),
      { minLength: 1, maxLength: 4 },
    ),
    addressLookupTables: fc.array(
      fc.record({
        address: fc.constantFrom(fixedKey(100), fixedKey(101), fixedKey(102)),
        addresses: fc.shuffledSubarray(pool),
      }),
      { maxLength: 3 },
    ),
    v0: fc.boolean(),
  })
  .filter((f) => f.instructions.every((ix) => ix.programId !== f.feePayer))
  .map(({ v0, ...f }) => ({ ...f, recentBlockhash: BLOCKHASH, ...(v0 ? { version: 'V0' as const } : {}) }));

describe('messageFromFields', () => {
  it.each(instructionMixes)('compiles "$name" byte for byte like web3.js', ({ fields }) => {
    expect(toHex(serializeMessage(messageFromFields(fields)))).toBe(toHex(web3Compile(fields).serialize()));
  });

  it('compiles random instruction mixes and lookup tables byte for byte like web3.js', () => {
    fc.assert(
      fc.property(randomFields, (fields) => {
        expect(toHex(serializeMessage(messageFromFields(fields)))).toBe(
          toHex(web3Compile(fields).serialize()),
        );
      }),
      { numRuns: 400 },
    );
  });

  it('puts the fee payer first even when an instruction names it later as read-only', () => {
    const msg = messageFromFields(
      simple({
        instructions: [
          {
            programId: SYSTEM_PROGRAM,
            accounts: [
              { pubkey: B, isSigner: true, isWritable: true },
              { pubkey: A, isSigner: false, isWritable: false },
            ],
            data: new Uint8Array(0),
          },
        ],
      }),
    );
    expect(msg.header).toEqual({
      numRequiredSignatures: 2,
      numReadonlySignedAccounts: 0,
      numReadonlyUnsignedAccounts: 1,
    });
    expect(msg.staticAccountKeys.map((k) => Buffer.from(k).toString('hex'))[0]).toBe(
      toHex(testSigner(0).publicKey),
    );
  });

  it('makes a legacy message without lookup tables and a v0 message with them or when asked', () => {
    expect(messageFromFields(simple()).version).toBe('legacy');
    expect(messageFromFields(simple({ version: 'V0' })).version).toBe(0);
    const withTable = messageFromFields(
      simple({ addressLookupTables: [{ address: fixedKey(50), addresses: [B] }] }),
    );
    expect(withTable.version).toBe(0);
    expect(withTable.addressTableLookups).toHaveLength(1);
    expect(withTable.staticAccountKeys).toHaveLength(2);
  });

  it('leaves out a lookup table that supplies no account', () => {
    const msg = messageFromFields(
      simple({ addressLookupTables: [{ address: fixedKey(50), addresses: [fixedKey(60)] }] }),
    );
    expect(msg.version).toBe(0);
    expect(msg.addressTableLookups).toHaveLength(0);
  });

  it.each<[string, Partial<SolanaTransactionFields>, string, string, ErrorCode?]>([
    ['a missing fee payer', { feePayer: '' }, 'solana.fee_payer', 'is required', 'FIELD_MISSING'],
    ['a fee payer that is not base58', { feePayer: '0OIl' }, 'solana.fee_payer', 'is not a base58 string'],
    ['a 31-byte fee payer', { feePayer: '1'.repeat(31) }, 'solana.fee_payer', 'of 32 bytes, got 31'],
    [
      'a blockhash of the wrong size',
      { recentBlockhash: 'abc' },
      'solana.recent_blockhash',
      'blockhash of 32 bytes',
    ],
    ['no instructions', { instructions: [] }, 'solana.instructions', 'is required', 'FIELD_MISSING'],
    [
      'a bad account key',
      {
        instructions: [
          { ...transfer(A, B), accounts: [{ pubkey: 'x', isSigner: false, isWritable: false }] },
        ],
      },
      'solana.instructions[0].accounts[0].pubkey',
      'base58',
    ],
    [
      'a bad program id',
      { instructions: [{ ...transfer(A, B), programId: '' }] },
      'solana.instructions[0].program_id',
      'is required',
      'FIELD_MISSING',
    ],
    [
      'the fee payer as a program',
      { instructions: [{ ...transfer(A, B), programId: A }] },
      'solana.fee_payer',
      'cannot also be',
    ],
    [
      'lookup tables on an explicit legacy message',
      { version: 'LEGACY', addressLookupTables: [{ address: fixedKey(50), addresses: [B] }] },
      'solana.address_lookup_tables',
      'ask for V0',
    ],
    [
      'a bad lookup table entry',
      { addressLookupTables: [{ address: fixedKey(50), addresses: [B, 'nope'] }] },
      'solana.address_lookup_tables[0].addresses[1]',
      'base58',
    ],
    [
      'a transaction above 1232 bytes',
      { instructions: [{ ...transfer(A, B), data: new Uint8Array(1100) }] },
      'solana.instructions',
      'above the 1232-byte limit',
    ],
  ])('rejects %s naming the field', (_name, over, field, reason, code) => {
    expectFieldError(simple(over), field, reason, code);
  });

  it('rejects a key with an extra leading 1 (one zero byte too many)', () => {
    expectFieldError(simple({ feePayer: `1${A}` }), 'solana.fee_payer', 'of 32 bytes, got 33');
  });
});
