import { base58 } from '@scure/base';
import { bytesToHex } from '../../src/shared/encoding.js';
import { encodePublicKey } from './publicKey.js';
import type { SolanaTransaction } from './types.js';

/** How policy facts show an account loaded from an address lookup table (its key is not in the message). */
export const ADDRESS_TABLE_LOOKUP = 'ADDRESS_TABLE_LOOKUP';

const SYSTEM_PROGRAM = '11111111111111111111111111111111';
const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';

// System program instructions are bincode: u32 LE discriminant, then the fields.
const SYSTEM_CREATE_ACCOUNT = 0;
const SYSTEM_TRANSFER = 2;
const SYSTEM_CREATE_ACCOUNT_WITH_SEED = 3;
const SYSTEM_WITHDRAW_NONCE_ACCOUNT = 5;
const SYSTEM_TRANSFER_WITH_SEED = 11;
// SPL Token instructions: u8 tag; Token-2022 extension 26 (TransferFee) sub-instruction 1.
const SPL_TRANSFER = 3;
const SPL_TRANSFER_CHECKED = 12;
const SPL_TRANSFER_FEE_EXTENSION = 26;
const SPL_TRANSFER_CHECKED_WITH_FEE = 1;

export type SolanaLookupFacts = {
  address_table_key: string;
  writable_indexes: number[];
  readonly_indexes: number[];
};

export type SolanaAccountFacts = { account_key: string; signer: boolean; writable: boolean };

export type SolanaInstructionFacts = {
  program_key: string;
  accounts: SolanaAccountFacts[];
  instruction_data_hex: string;
  /** The lookup-table entries this instruction's accounts come from. */
  address_table_lookups: SolanaLookupFacts[];
};

export type SolanaTransferFacts = { from: string; to: string; amount: bigint };

export type SolanaSplTransferFacts = {
  from: string;
  to: string;
  amount: bigint;
  owner: string;
  signers: string[];
  /** '' for a plain Transfer, which names no mint. */
  token_mint: string;
};

export type SolanaTransactionFacts = {
  account_keys: string[];
  program_keys: string[];
  instructions: SolanaInstructionFacts[];
  transfers: SolanaTransferFacts[];
  spl_transfers: SolanaSplTransferFacts[];
  recent_blockhash: string;
  address_table_lookups: SolanaLookupFacts[];
};

interface ResolvedAccount {
  readonly facts: SolanaAccountFacts;
  /** For a loaded account: which lookup and which table index. */
  readonly lookup?: { readonly lookup: number; readonly index: number };
}

/** Every account index of the message resolved: static keys, then writable, then read-only loaded ones. */
function resolveAccounts(tx: SolanaTransaction): ResolvedAccount[] {
  const { header, staticAccountKeys: keys, addressTableLookups } = tx.message;
  const required = header.numRequiredSignatures;
  const out: ResolvedAccount[] = keys.map((key, i) => ({
    facts: {
      account_key: encodePublicKey(key),
      signer: i < required,
      writable:
        i < required
          ? i < required - header.numReadonlySignedAccounts
          : i < keys.length - header.numReadonlyUnsignedAccounts,
    },
  }));
  for (const writable of [true, false]) {
    addressTableLookups.forEach((l, lookup) => {
      for (const index of writable ? l.writableIndexes : l.readonlyIndexes) {
        out.push({
          facts: { account_key: ADDRESS_TABLE_LOOKUP, signer: false, writable },
          lookup: { lookup, index },
        });
      }
    });
  }
  return out;
}

function u64le(data: Uint8Array, offset: number): bigint {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength).readBigUInt64LE(offset);
}

function u32le(data: Uint8Array): number {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength).readUInt32LE(0);
}

/**
 * The `solana.tx` facts policies read (turnkey-api.md 8.3), from the parsed message alone. Accounts
 * loaded from lookup tables show as 'ADDRESS_TABLE_LOOKUP'; writability is the header's. Transfers
 * are decoded from top-level instructions only, as leniently as the programs read them (trailing
 * data is ignored by both), so that every System instruction that moves lamports is listed in
 * `transfers` (Transfer, TransferWithSeed, and the funding of CreateAccount, CreateAccountWithSeed
 * and WithdrawNonceAccount: a policy that names where lamports may go must see those too), and
 * SPL Token / Token-2022 Transfer, TransferChecked and TransferCheckedWithFee in `spl_transfers`.
 */
export function describeTransaction(tx: SolanaTransaction): SolanaTransactionFacts {
  const msg = tx.message;
  const accounts = resolveAccounts(tx);
  const keyAt = (i: number): string => (accounts[i] as ResolvedAccount).facts.account_key;
  const lookupKeys = msg.addressTableLookups.map((l) => encodePublicKey(l.accountKey));

  const programKeys: string[] = [];
  const transfers: SolanaTransferFacts[] = [];
  const splTransfers: SolanaSplTransferFacts[] = [];
  const instructions = msg.instructions.map((ix): SolanaInstructionFacts => {
    const program = keyAt(ix.programIdIndex);
    if (!programKeys.includes(program)) programKeys.push(program);
    const used = new Map<number, { writable: number[]; readonly: number[] }>();
    for (const a of ix.accountIndexes) {
      const r = accounts[a] as ResolvedAccount;
      if (r.lookup === undefined) continue;
      let entry = used.get(r.lookup.lookup);
      if (entry === undefined) used.set(r.lookup.lookup, (entry = { writable: [], readonly: [] }));
      const list = r.facts.writable ? entry.writable : entry.readonly;
      if (!list.includes(r.lookup.index)) list.push(r.lookup.index);
    }
    const ixKeys = ix.accountIndexes.map(keyAt);
    decodeTransfer(program, ix.data, ixKeys, transfers, splTransfers);
    return {
      program_key: program,
      accounts: ix.accountIndexes.map((a) => ({ ...(accounts[a] as ResolvedAccount).facts })),
      instruction_data_hex: bytesToHex(ix.data),
      address_table_lookups: [...used.entries()]
        .sort(([a], [b]) => a - b)
        .map(([l, e]) => ({
          address_table_key: lookupKeys[l] as string,
          writable_indexes: e.writable,
          readonly_indexes: e.readonly,
        })),
    };
  });

  return {
    account_keys: msg.staticAccountKeys.map((k) => encodePublicKey(k)),
    program_keys: programKeys,
    instructions,
    transfers,
    spl_transfers: splTransfers,
    recent_blockhash: base58.encode(msg.recentBlockhash),
    address_table_lookups: msg.addressTableLookups.map((l, i) => ({
      address_table_key: lookupKeys[i] as string,
      writable_indexes: [...l.writableIndexes],
      readonly_indexes: [...l.readonlyIndexes],
    })),
  };
}

function decodeTransfer(
  program: string,
  data: Uint8Array,
  keys: string[],
  transfers: SolanaTransferFacts[],
  splTransfers: SolanaSplTransferFacts[],
): void {
  if (program === SYSTEM_PROGRAM) {
    if (data.length < 12) return;
    const kind = u32le(data);
    const lamports = (from: number, to: number, at: number): void => {
      if (keys.length > Math.max(from, to) && data.length >= at + 8)
        transfers.push({ from: keys[from] as string, to: keys[to] as string, amount: u64le(data, at) });
    };
    switch (kind) {
      // Accounts: [from, to]; [funding, new account]; [nonce account, recipient, …].
      case SYSTEM_TRANSFER:
      case SYSTEM_CREATE_ACCOUNT:
      case SYSTEM_WITHDRAW_NONCE_ACCOUNT:
        return lamports(0, 1, 4);
      // Accounts: [from (derived), base, to].
      case SYSTEM_TRANSFER_WITH_SEED:
        return lamports(0, 2, 4);
      case SYSTEM_CREATE_ACCOUNT_WITH_SEED: {
        // Accounts: [funding, created, …]; data: base (32), seed (u64 length, bytes), lamports, …
        const seedLength = data.length >= 44 ? u64le(data, 36) : undefined;
        if (seedLength !== undefined && seedLength <= BigInt(data.length))
          lamports(0, 1, 44 + Number(seedLength));
        return;
      }
      default:
        return;
    }
  }
  if (program !== TOKEN_PROGRAM && program !== TOKEN_2022_PROGRAM) return;
  const tag = data[0];
  if (tag === SPL_TRANSFER && data.length >= 9 && keys.length >= 3) {
    // Accounts: [source, destination, owner, ...multisig signers].
    splTransfers.push({
      from: keys[0] as string,
      to: keys[1] as string,
      amount: u64le(data, 1),
      owner: keys[2] as string,
      signers: keys.slice(3),
      token_mint: '',
    });
    return;
  }
  let amountAt: number | undefined;
  if (tag === SPL_TRANSFER_CHECKED && data.length >= 10) amountAt = 1;
  if (
    program === TOKEN_2022_PROGRAM &&
    tag === SPL_TRANSFER_FEE_EXTENSION &&
    data[1] === SPL_TRANSFER_CHECKED_WITH_FEE &&
    data.length >= 19
  ) {
    amountAt = 2;
  }
  if (amountAt !== undefined && keys.length >= 4) {
    // Accounts: [source, mint, destination, owner, ...multisig signers].
    splTransfers.push({
      from: keys[0] as string,
      to: keys[2] as string,
      amount: u64le(data, amountAt),
      owner: keys[3] as string,
      signers: keys.slice(4),
      token_mint: keys[1] as string,
    });
  }
}
