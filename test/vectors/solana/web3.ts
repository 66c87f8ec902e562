/**
 * Cross-check helpers: the same structured fields compiled by @solana/web3.js 1.x
 * (`TransactionMessage.compileToLegacyMessage` / `compileToV0Message`), and fixed instruction mixes.
 */
import {
  AddressLookupTableAccount,
  PublicKey,
  TransactionInstruction,
  TransactionMessage,
  type VersionedMessage,
} from '@solana/web3.js';
import type { SolanaTransactionFields } from '../../../chains/solana/index.js';
import { testSigner } from './keys.js';

export const SYSTEM_PROGRAM = '11111111111111111111111111111111';
export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
export const MEMO_PROGRAM = 'MemoSq4gqABAXKb96qy9dGBwY5WPmJYNVhV3qT3JUx5';

/** A deterministic, well-formed key that is not one of the test signers. */
export function fixedKey(n: number): string {
  const b = new Uint8Array(32);
  b[0] = 0xa0;
  b[31] = n;
  return new PublicKey(b).toBase58();
}

export const BLOCKHASH = new PublicKey(new Uint8Array(32).fill(7)).toBase58();

export function systemTransferData(lamports: bigint): Uint8Array {
  const b = Buffer.alloc(12);
  b.writeUInt32LE(2, 0);
  b.writeBigUInt64LE(lamports, 4);
  return new Uint8Array(b);
}

export function transferCheckedData(amount: bigint, decimals: number): Uint8Array {
  const b = Buffer.alloc(10);
  b.writeUInt8(12, 0);
  b.writeBigUInt64LE(amount, 1);
  b.writeUInt8(decimals, 9);
  return new Uint8Array(b);
}

export function computeUnitLimitData(units: number): Uint8Array {
  const b = Buffer.alloc(5);
  b.writeUInt8(2, 0);
  b.writeUInt32LE(units, 1);
  return new Uint8Array(b);
}

const acct = (pubkey: string, isSigner: boolean, isWritable: boolean) => ({ pubkey, isSigner, isWritable });

/** Compiles `fields` with web3.js the way a client of the 1.x API would. */
export function web3Compile(fields: SolanaTransactionFields): VersionedMessage {
  const message = new TransactionMessage({
    payerKey: new PublicKey(fields.feePayer),
    recentBlockhash: fields.recentBlockhash,
    instructions: fields.instructions.map(
      (ix) =>
        new TransactionInstruction({
          programId: new PublicKey(ix.programId),
          keys: ix.accounts.map((a) => ({ ...a, pubkey: new PublicKey(a.pubkey) })),
          data: Buffer.from(ix.data),
        }),
    ),
  });
  const tables = fields.addressLookupTables ?? [];
  if (tables.length === 0 && fields.version !== 'V0') return message.compileToLegacyMessage();
  return message.compileToV0Message(
    tables.map(
      (t) =>
        new AddressLookupTableAccount({
          key: new PublicKey(t.address),
          state: {
            deactivationSlot: BigInt('0xffffffffffffffff'),
            lastExtendedSlot: 0,
            lastExtendedSlotStartIndex: 0,
            addresses: t.addresses.map((a) => new PublicKey(a)),
          },
        }),
    ),
  );
}

const [A, B, C] = [testSigner(0).address, testSigner(1).address, testSigner(2).address];

/** Instruction mixes whose compiled order is not trivial; each is compiled by both sides in the tests. */
export const instructionMixes: { name: string; fields: SolanaTransactionFields }[] = [
  {
    name: 'one System transfer',
    fields: {
      feePayer: A,
      recentBlockhash: BLOCKHASH,
      instructions: [
        { programId: SYSTEM_PROGRAM, accounts: [acct(A, true, true), acct(fixedKey(1), false, true)], data: systemTransferData(5000n) },
      ],
    },
  },
  {
    name: 'compute budget and two transfers from two signers',
    fields: {
      feePayer: A,
      recentBlockhash: BLOCKHASH,
      instructions: [
        { programId: COMPUTE_BUDGET_PROGRAM, accounts: [], data: computeUnitLimitData(200_000) },
        { programId: SYSTEM_PROGRAM, accounts: [acct(A, true, true), acct(C, false, true)], data: systemTransferData(1n) },
        { programId: SYSTEM_PROGRAM, accounts: [acct(B, true, true), acct(C, false, true)], data: systemTransferData(2n) },
      ],
    },
  },
  {
    name: 'read-only signers, a repeated account, the payer as a plain account, promotions by later metas',
    fields: {
      feePayer: B,
      recentBlockhash: BLOCKHASH,
      instructions: [
        {
          programId: MEMO_PROGRAM,
          accounts: [acct(C, true, false), acct(fixedKey(9), false, false), acct(fixedKey(9), false, false)],
          data: new TextEncoder().encode('hello'),
        },
        {
          programId: TOKEN_PROGRAM,
          accounts: [
            acct(fixedKey(3), false, true),
            acct(fixedKey(4), false, false),
            acct(fixedKey(5), false, true),
            acct(A, true, false),
            acct(B, false, false),
          ],
          data: transferCheckedData(1_000_000n, 6),
        },
        { programId: SYSTEM_PROGRAM, accounts: [acct(fixedKey(9), false, true), acct(C, true, true)], data: new Uint8Array(0) },
      ],
    },
  },
  {
    name: 'a program id also passed as an account, and empty data',
    fields: {
      feePayer: A,
      recentBlockhash: BLOCKHASH,
      instructions: [
        { programId: MEMO_PROGRAM, accounts: [acct(TOKEN_PROGRAM, false, false)], data: new Uint8Array(0) },
        { programId: TOKEN_PROGRAM, accounts: [acct(MEMO_PROGRAM, false, true)], data: Uint8Array.of(1, 2, 3) },
      ],
    },
  },
  {
    name: 'v0 without lookup tables',
    fields: {
      feePayer: A,
      recentBlockhash: BLOCKHASH,
      version: 'V0',
      instructions: [
        { programId: SYSTEM_PROGRAM, accounts: [acct(A, true, true), acct(B, false, true)], data: systemTransferData(9n) },
      ],
    },
  },
  {
    name: 'v0 with two lookup tables (shared entries, signer and program ids stay static)',
    fields: {
      feePayer: A,
      recentBlockhash: BLOCKHASH,
      instructions: [
        {
          programId: TOKEN_PROGRAM,
          accounts: [
            acct(fixedKey(3), false, true),
            acct(fixedKey(4), false, false),
            acct(fixedKey(5), false, true),
            acct(B, true, false),
            acct(fixedKey(6), false, false),
          ],
          data: transferCheckedData(42n, 9),
        },
        { programId: SYSTEM_PROGRAM, accounts: [acct(A, true, true), acct(fixedKey(7), false, true)], data: systemTransferData(3n) },
      ],
      addressLookupTables: [
        { address: fixedKey(100), addresses: [fixedKey(20), fixedKey(5), B, TOKEN_PROGRAM, fixedKey(4)] },
        { address: fixedKey(101), addresses: [fixedKey(4), fixedKey(7), fixedKey(6), fixedKey(3)] },
        { address: fixedKey(102), addresses: [fixedKey(30)] },
      ],
    },
  },
];
