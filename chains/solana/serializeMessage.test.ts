import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { toHex } from '../../test/vectors/solana/keys.js';
import { baseline, encodeRawMessage } from '../../test/vectors/solana/rawMessage.js';
import { parseMessage } from './parseMessage.js';
import { serializeMessage } from './serializeMessage.js';
import type { SolanaMessage } from './types.js';

const base = (): SolanaMessage => parseMessage(encodeRawMessage(baseline()));

describe('serializeMessage', () => {
  it('writes what the independent test encoder writes', () => {
    expect(toHex(serializeMessage(base()))).toBe(toHex(encodeRawMessage(baseline())));
  });

  it('prefixes a v0 message with 0x80 and appends its lookups', () => {
    const raw = {
      ...baseline(),
      versionByte: 0x80,
      lookups: [{ key: new Uint8Array(32).fill(8), writable: [1], readonly: [] }],
    };
    const msg = parseMessage(encodeRawMessage(raw));
    expect(toHex(serializeMessage(msg))).toBe(toHex(encodeRawMessage(raw)));
  });

  it.each<[string, (m: SolanaMessage) => SolanaMessage, string]>([
    [
      'an account index out of range',
      (m) => ({ ...m, instructions: [{ programIdIndex: 3, accountIndexes: [9], data: new Uint8Array(0) }] }),
      'out of range',
    ],
    [
      'a 31-byte blockhash',
      (m) => ({ ...m, recentBlockhash: new Uint8Array(31) }),
      'recent_blockhash: must be 32 bytes',
    ],
    [
      'lookups on a legacy message',
      (m) => ({
        ...m,
        addressTableLookups: [{ accountKey: new Uint8Array(32), writableIndexes: [0], readonlyIndexes: [] }],
      }),
      'a legacy message has no address table lookups',
    ],
    [
      'an index above 255',
      (m) => ({
        ...m,
        version: 0,
        addressTableLookups: [
          { accountKey: new Uint8Array(32), writableIndexes: [256], readonlyIndexes: [] },
        ],
      }),
      'must be a u8 table index',
    ],
  ])('refuses to write %s', (_name, mutate, reason) => {
    expect(() => serializeMessage(mutate(base()))).toThrow(CountersignError);
    expect(() => serializeMessage(mutate(base()))).toThrow(reason);
  });
});
