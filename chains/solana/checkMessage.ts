/**
 * The structural rules a message must meet, shared by the parser and the serializer so neither can
 * produce what the other rejects. They follow the runtime's `sanitize` (legacy and v0) plus two
 * checks it makes later: static keys are distinct (else AccountLoadedTwice) and at most 256
 * accounts (u8 indexes).
 */
import type { CountersignError } from '../../src/shared/errors.js';
import { MAX_ACCOUNTS, PUBLIC_KEY_LENGTH, type SolanaMessage } from './types.js';

type Fail = (field: string, reason: string) => CountersignError;

function isU8(n: number): boolean {
  return Number.isInteger(n) && n >= 0 && n <= 0xff;
}

export function checkMessage(msg: SolanaMessage, fail: Fail): void {
  const { numRequiredSignatures: required, numReadonlySignedAccounts: roSigned } = msg.header;
  const roUnsigned = msg.header.numReadonlyUnsignedAccounts;
  if (!isU8(required) || !isU8(roSigned) || !isU8(roUnsigned)) throw fail('header', 'counts must be u8');
  if (msg.version === 'legacy' && required >= 0x80) {
    // The top bit of a legacy message's first byte would read as a version prefix.
    throw fail('header.num_required_signatures', 'a legacy message cannot have 128 or more signers');
  }
  if (required === 0) throw fail('header.num_required_signatures', 'must be at least 1 (the fee payer)');
  if (roSigned >= required) {
    throw fail('header.num_readonly_signed_accounts', 'must leave the fee payer writable');
  }
  const keys = msg.staticAccountKeys;
  if (required + roUnsigned > keys.length) {
    throw fail('header', `needs ${required + roUnsigned} account keys, the message has ${keys.length}`);
  }
  const seen = new Set<string>();
  keys.forEach((key, i) => {
    if (key.length !== PUBLIC_KEY_LENGTH) throw fail(`account_keys[${i}]`, 'must be 32 bytes');
    const hex = Buffer.from(key).toString('hex');
    if (seen.has(hex)) throw fail(`account_keys[${i}]`, 'duplicates an earlier account key');
    seen.add(hex);
  });
  if (msg.recentBlockhash.length !== PUBLIC_KEY_LENGTH) throw fail('recent_blockhash', 'must be 32 bytes');

  let loaded = 0;
  if (msg.version === 'legacy' && msg.addressTableLookups.length > 0) {
    throw fail('address_table_lookups', 'a legacy message has no address table lookups');
  }
  msg.addressTableLookups.forEach((lookup, i) => {
    const f = `address_table_lookups[${i}]`;
    if (lookup.accountKey.length !== PUBLIC_KEY_LENGTH) throw fail(`${f}.account_key`, 'must be 32 bytes');
    if (lookup.writableIndexes.length + lookup.readonlyIndexes.length === 0) {
      throw fail(f, 'loads no account (each lookup must load at least one)');
    }
    for (const [name, list] of [
      ['writable_indexes', lookup.writableIndexes],
      ['readonly_indexes', lookup.readonlyIndexes],
    ] as const) {
      list.forEach((n, j) => {
        if (!isU8(n)) throw fail(`${f}.${name}[${j}]`, 'must be a u8 table index');
      });
    }
    loaded += lookup.writableIndexes.length + lookup.readonlyIndexes.length;
  });
  const total = keys.length + loaded;
  if (total > MAX_ACCOUNTS)
    throw fail('account_keys', `${total} accounts exceed the limit of ${MAX_ACCOUNTS}`);

  msg.instructions.forEach((ix, i) => {
    const f = `instructions[${i}]`;
    if (!Number.isInteger(ix.programIdIndex) || ix.programIdIndex < 0 || ix.programIdIndex >= total) {
      throw fail(`${f}.program_id_index`, `${ix.programIdIndex} is out of range (${total} accounts)`);
    }
    if (ix.programIdIndex >= keys.length) {
      throw fail(`${f}.program_id_index`, 'a program id may not come from an address lookup table');
    }
    if (ix.programIdIndex === 0) throw fail(`${f}.program_id_index`, 'the fee payer cannot be a program');
    ix.accountIndexes.forEach((a, j) => {
      if (!Number.isInteger(a) || a < 0 || a >= total) {
        throw fail(`${f}.account_indexes[${j}]`, `${a} is out of range (${total} accounts)`);
      }
    });
  });
}
