import { CountersignError } from '../../src/shared/errors.js';
import { checkMessage } from './checkMessage.js';
import { malformed } from './malformed.js';
import { Reader } from './reader.js';
import {
  PUBLIC_KEY_LENGTH,
  VERSION_PREFIX,
  type SolanaAddressTableLookup,
  type SolanaCompiledInstruction,
  type SolanaMessage,
  type SolanaMessageVersion,
} from './types.js';

/** Strictly decodes a legacy or v0 message (the bytes signatures commit to); rejects trailing bytes. */
export function parseMessage(bytes: Uint8Array): SolanaMessage {
  if (bytes.length === 0) throw malformed('message', 'input is empty');
  const reader = new Reader(bytes);
  const first = reader.bytes[reader.offset];
  let version: SolanaMessageVersion = 'legacy';
  if (first !== undefined && (first & VERSION_PREFIX) !== 0) {
    const v = first & ~VERSION_PREFIX;
    if (v !== 0) {
      throw new CountersignError(
        'TRANSACTION_TYPE_UNSUPPORTED',
        `failed to pre-parse Solana transaction: message version ${v} is not supported (legacy and v0 are)`,
        { meta: { transactionField: 'version' } },
      );
    }
    version = 0;
    reader.offset += 1;
  }
  const header = {
    numRequiredSignatures: reader.u8('header.num_required_signatures'),
    numReadonlySignedAccounts: reader.u8('header.num_readonly_signed_accounts'),
    numReadonlyUnsignedAccounts: reader.u8('header.num_readonly_unsigned_accounts'),
  };
  const keyCount = reader.length('account_keys');
  const staticAccountKeys: Uint8Array[] = [];
  for (let i = 0; i < keyCount; i++)
    staticAccountKeys.push(reader.take(PUBLIC_KEY_LENGTH, `account_keys[${i}]`));
  const recentBlockhash = reader.take(PUBLIC_KEY_LENGTH, 'recent_blockhash');
  const ixCount = reader.length('instructions');
  const instructions: SolanaCompiledInstruction[] = [];
  for (let i = 0; i < ixCount; i++) {
    const f = `instructions[${i}]`;
    const programIdIndex = reader.u8(`${f}.program_id_index`);
    const accountIndexes = reader.u8List(`${f}.account_indexes`);
    const dataLength = reader.length(`${f}.data`);
    instructions.push({ programIdIndex, accountIndexes, data: reader.take(dataLength, `${f}.data`) });
  }
  const addressTableLookups: SolanaAddressTableLookup[] = [];
  if (version === 0) {
    const lookupCount = reader.length('address_table_lookups');
    for (let i = 0; i < lookupCount; i++) {
      const f = `address_table_lookups[${i}]`;
      addressTableLookups.push({
        accountKey: reader.take(PUBLIC_KEY_LENGTH, `${f}.account_key`),
        writableIndexes: reader.u8List(`${f}.writable_indexes`),
        readonlyIndexes: reader.u8List(`${f}.readonly_indexes`),
      });
    }
  }
  if (reader.offset !== reader.bytes.length) {
    throw malformed(
      'message',
      `${reader.bytes.length - reader.offset} trailing byte(s) after offset ${reader.offset}`,
    );
  }
  const msg: SolanaMessage = {
    version,
    header,
    staticAccountKeys,
    recentBlockhash,
    instructions,
    addressTableLookups,
  };
  checkMessage(msg, malformed);
  return msg;
}
