import { concatBytes } from '../../src/shared/encoding.js';
import { checkMessage } from './checkMessage.js';
import { malformed } from './malformed.js';
import { encodeShortVec } from './shortVec.js';
import { VERSION_PREFIX, type SolanaMessage } from './types.js';

/** A compact-u16 count followed by u8 values (account and table indexes). */
function u8List(items: readonly number[], field: string): Uint8Array {
  if (items.length > 0xffff) throw malformed(field, 'has more than 65535 entries');
  return concatBytes(encodeShortVec(items.length), Uint8Array.from(items));
}

/** Encodes a legacy or v0 message: the exact bytes each signature commits to. */
export function serializeMessage(msg: SolanaMessage): Uint8Array {
  checkMessage(msg, malformed);
  const parts: Uint8Array[] = [];
  if (msg.version === 0) parts.push(Uint8Array.of(VERSION_PREFIX | 0));
  const h = msg.header;
  parts.push(
    Uint8Array.of(h.numRequiredSignatures, h.numReadonlySignedAccounts, h.numReadonlyUnsignedAccounts),
  );
  parts.push(encodeShortVec(msg.staticAccountKeys.length), ...msg.staticAccountKeys, msg.recentBlockhash);
  if (msg.instructions.length > 0xffff) throw malformed('instructions', 'has more than 65535 entries');
  parts.push(encodeShortVec(msg.instructions.length));
  msg.instructions.forEach((ix, i) => {
    parts.push(Uint8Array.of(ix.programIdIndex));
    parts.push(u8List(ix.accountIndexes, `instructions[${i}].account_indexes`));
    if (ix.data.length > 0xffff) throw malformed(`instructions[${i}].data`, 'is longer than 65535 bytes');
    parts.push(encodeShortVec(ix.data.length), ix.data);
  });
  if (msg.version === 0) {
    parts.push(encodeShortVec(msg.addressTableLookups.length));
    msg.addressTableLookups.forEach((l, i) => {
      parts.push(l.accountKey);
      parts.push(u8List(l.writableIndexes, `address_table_lookups[${i}].writable_indexes`));
      parts.push(u8List(l.readonlyIndexes, `address_table_lookups[${i}].readonly_indexes`));
    });
  }
  return concatBytes(...parts);
}
