import { PublicKey, SystemProgram, type TransactionInstruction } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { testSigner } from '../../test/vectors/solana/keys.js';
import {
  BLOCKHASH,
  fixedKey,
  instructionMixes,
  SYSTEM_PROGRAM,
  systemTransferData,
  TOKEN_PROGRAM,
  transferCheckedData,
} from '../../test/vectors/solana/web3.js';
import { ADDRESS_TABLE_LOOKUP, describeTransaction } from './describeTransaction.js';
import { messageFromFields } from './messageFromFields.js';
import type { SolanaInstructionFields, SolanaTransactionFields } from './types.js';
import { unsignedTransaction } from './unsignedTransaction.js';

const A = testSigner(0).address;
const B = testSigner(1).address;
const TOKEN_2022 = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
const meta = (pubkey: string, isSigner = false, isWritable = true) => ({ pubkey, isSigner, isWritable });

const facts = (instructions: SolanaInstructionFields[], extra: Partial<SolanaTransactionFields> = {}) =>
  describeTransaction(
    unsignedTransaction(
      messageFromFields({ feePayer: A, recentBlockhash: BLOCKHASH, instructions, ...extra }),
    ),
  );

describe('describeTransaction', () => {
  it('decodes a System transfer into from, to and a bigint amount', () => {
    const to = fixedKey(1);
    const f = facts([
      {
        programId: SYSTEM_PROGRAM,
        accounts: [meta(A, true), meta(to)],
        data: systemTransferData(1_500_000_000n),
      },
    ]);
    expect(f).toEqual({
      account_keys: [A, to, SYSTEM_PROGRAM],
      program_keys: [SYSTEM_PROGRAM],
      instructions: [
        {
          program_key: SYSTEM_PROGRAM,
          accounts: [
            { account_key: A, signer: true, writable: true },
            { account_key: to, signer: false, writable: true },
          ],
          instruction_data_hex: '02000000002f685900000000',
          address_table_lookups: [],
        },
      ],
      transfers: [{ from: A, to, amount: 1_500_000_000n }],
      spl_transfers: [],
      recent_blockhash: BLOCKHASH,
      address_table_lookups: [],
    });
  });

  it('decodes an SPL TransferChecked with its mint, owner and multisig signers', () => {
    const [source, mint, destination, signer1] = [fixedKey(3), fixedKey(4), fixedKey(5), fixedKey(6)];
    const f = facts([
      {
        programId: TOKEN_PROGRAM,
        accounts: [
          meta(source),
          meta(mint, false, false),
          meta(destination),
          meta(B, false, false),
          meta(signer1, true, false),
        ],
        data: transferCheckedData(1_234_567n, 6),
      },
    ]);
    expect(f.spl_transfers).toEqual([
      { from: source, to: destination, amount: 1_234_567n, owner: B, signers: [signer1], token_mint: mint },
    ]);
    expect(f.transfers).toEqual([]);
    expect(f.program_keys).toEqual([TOKEN_PROGRAM]);
  });

  it('decodes a plain SPL Transfer (no mint) and a Token-2022 TransferCheckedWithFee', () => {
    const plain = Uint8Array.from([3, ...Buffer.from('0a00000000000000', 'hex')]);
    const withFee = Uint8Array.from([
      26,
      1,
      ...Buffer.from('6400000000000000', 'hex'),
      2,
      ...new Uint8Array(8),
    ]);
    const f = facts([
      {
        programId: TOKEN_PROGRAM,
        accounts: [meta(fixedKey(3)), meta(fixedKey(5)), meta(A, true)],
        data: plain,
      },
      {
        programId: TOKEN_2022,
        accounts: [meta(fixedKey(3)), meta(fixedKey(4), false, false), meta(fixedKey(5)), meta(A, true)],
        data: withFee,
      },
    ]);
    expect(f.spl_transfers).toEqual([
      { from: fixedKey(3), to: fixedKey(5), amount: 10n, owner: A, signers: [], token_mint: '' },
      { from: fixedKey(3), to: fixedKey(5), amount: 100n, owner: A, signers: [], token_mint: fixedKey(4) },
    ]);
  });

  it('lists a System TransferWithSeed and a transfer with trailing data (the program ignores it)', () => {
    const seeded = Buffer.alloc(12 + 8 + 1 + 32);
    seeded.writeUInt32LE(11, 0);
    seeded.writeBigUInt64LE(7n, 4);
    seeded.writeBigUInt64LE(1n, 12);
    const f = facts([
      {
        programId: SYSTEM_PROGRAM,
        accounts: [meta(fixedKey(8)), meta(A, true, false), meta(fixedKey(9))],
        data: seeded,
      },
      {
        programId: SYSTEM_PROGRAM,
        accounts: [meta(A, true), meta(B)],
        data: Uint8Array.from([...systemTransferData(5n), 0xff]),
      },
    ]);
    expect(f.transfers).toEqual([
      { from: fixedKey(8), to: fixedKey(9), amount: 7n },
      { from: A, to: B, amount: 5n },
    ]);
  });

  it('lists the lamports that account creation and nonce withdrawal move (instructions built by @solana/web3.js)', () => {
    const pk = (k: string) => new PublicKey(k);
    const fields = (ix: TransactionInstruction): SolanaInstructionFields => ({
      programId: ix.programId.toBase58(),
      accounts: ix.keys.map((k) => meta(k.pubkey.toBase58(), k.isSigner, k.isWritable)),
      data: new Uint8Array(ix.data),
    });
    const f = facts(
      [
        SystemProgram.createAccount({
          fromPubkey: pk(A),
          newAccountPubkey: pk(B),
          lamports: 2_039_280,
          space: 165,
          programId: pk(TOKEN_PROGRAM),
        }),
        SystemProgram.createAccountWithSeed({
          fromPubkey: pk(A),
          newAccountPubkey: pk(fixedKey(4)),
          basePubkey: pk(A),
          seed: 'a seed of some length',
          lamports: 1_000_000,
          space: 0,
          programId: pk(SYSTEM_PROGRAM),
        }),
        SystemProgram.nonceWithdraw({
          noncePubkey: pk(fixedKey(5)),
          authorizedPubkey: pk(A),
          toPubkey: pk(fixedKey(6)),
          lamports: 42,
        }),
      ].map(fields),
    );
    expect(f.transfers).toEqual([
      { from: A, to: B, amount: 2_039_280n },
      { from: A, to: fixedKey(4), amount: 1_000_000n },
      { from: fixedKey(5), to: fixedKey(6), amount: 42n },
    ]);
  });

  it('does not read lamports past the end of a CreateAccountWithSeed whose seed length overruns it', () => {
    const data = Buffer.alloc(44 + 8);
    data.writeUInt32LE(3, 0);
    data.writeBigUInt64LE(1n << 40n, 36);
    const f = facts([{ programId: SYSTEM_PROGRAM, accounts: [meta(A, true), meta(B, true)], data }]);
    expect(f.transfers).toEqual([]);
  });

  it('does not read a transfer out of data too short for one or without its accounts', () => {
    const f = facts([
      {
        programId: SYSTEM_PROGRAM,
        accounts: [meta(A, true), meta(B)],
        data: systemTransferData(5n).subarray(0, 11),
      },
      { programId: SYSTEM_PROGRAM, accounts: [meta(A, true)], data: systemTransferData(5n) },
      {
        programId: TOKEN_PROGRAM,
        accounts: [meta(fixedKey(3)), meta(fixedKey(4)), meta(fixedKey(5)), meta(A, true)],
        data: transferCheckedData(1n, 0).subarray(0, 9),
      },
    ]);
    expect(f.transfers).toEqual([]);
    expect(f.spl_transfers).toEqual([]);
  });

  it("shows accounts loaded from lookup tables as 'ADDRESS_TABLE_LOOKUP' with their tables and indexes", () => {
    const { fields } = instructionMixes[5]!;
    const f = describeTransaction(unsignedTransaction(messageFromFields(fields)));
    // Table 100 supplies fixedKey(5) (index 1, writable) and fixedKey(4) (index 4, read-only);
    // table 101 supplies fixedKey(7) and fixedKey(3) (writable) and fixedKey(6) (read-only).
    expect(f.address_table_lookups).toEqual([
      { address_table_key: fixedKey(100), writable_indexes: [1], readonly_indexes: [4] },
      { address_table_key: fixedKey(101), writable_indexes: [3, 1], readonly_indexes: [2] },
    ]);
    expect(f.account_keys).toEqual([A, B, TOKEN_PROGRAM, SYSTEM_PROGRAM]);
    const token = f.instructions[0]!;
    expect(token.accounts).toEqual([
      { account_key: ADDRESS_TABLE_LOOKUP, signer: false, writable: true },
      { account_key: ADDRESS_TABLE_LOOKUP, signer: false, writable: false },
      { account_key: ADDRESS_TABLE_LOOKUP, signer: false, writable: true },
      { account_key: B, signer: true, writable: false },
      { account_key: ADDRESS_TABLE_LOOKUP, signer: false, writable: false },
    ]);
    expect(token.address_table_lookups).toEqual([
      { address_table_key: fixedKey(100), writable_indexes: [1], readonly_indexes: [4] },
      { address_table_key: fixedKey(101), writable_indexes: [3], readonly_indexes: [2] },
    ]);
    expect(f.spl_transfers).toEqual([
      {
        from: ADDRESS_TABLE_LOOKUP,
        to: ADDRESS_TABLE_LOOKUP,
        amount: 42n,
        owner: B,
        signers: [ADDRESS_TABLE_LOOKUP],
        token_mint: ADDRESS_TABLE_LOOKUP,
      },
    ]);
    expect(f.transfers).toEqual([{ from: A, to: ADDRESS_TABLE_LOOKUP, amount: 3n }]);
    expect(f.program_keys).toEqual([TOKEN_PROGRAM, SYSTEM_PROGRAM]);
  });
});
