import { MessageV0, Message, VersionedMessage } from '@solana/web3.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { validMessage } from '../../test/vectors/solana/arbitraries.js';
import { toHex } from '../../test/vectors/solana/keys.js';
import { baseline, encodeRawMessage } from '../../test/vectors/solana/rawMessage.js';
import { instructionMixes, web3Compile } from '../../test/vectors/solana/web3.js';
import { parseMessage } from './parseMessage.js';
import { serializeMessage } from './serializeMessage.js';

describe('parseMessage', () => {
  it.each(instructionMixes)('reads the web3.js-compiled message of "$name" field for field', ({ fields }) => {
    const web3 = web3Compile(fields);
    const msg = parseMessage(web3.serialize());
    expect(msg.header).toEqual(web3.header);
    expect(msg.staticAccountKeys.map(toHex)).toEqual(web3.staticAccountKeys.map((k) => toHex(k.toBytes())));
    expect(msg.instructions.map((ix) => [ix.programIdIndex, ix.accountIndexes, toHex(ix.data)])).toEqual(
      web3.compiledInstructions.map((ix) => [ix.programIdIndex, ix.accountKeyIndexes, toHex(ix.data)]),
    );
    expect(
      msg.addressTableLookups.map((l) => [toHex(l.accountKey), l.writableIndexes, l.readonlyIndexes]),
    ).toEqual(
      web3.addressTableLookups.map((l) => [
        toHex(l.accountKey.toBytes()),
        l.writableIndexes,
        l.readonlyIndexes,
      ]),
    );
    expect(msg.version).toBe(web3 instanceof MessageV0 ? 0 : 'legacy');
  });

  it('random valid messages round trip through serialize, parse and web3.js', () => {
    fc.assert(
      fc.property(validMessage, (msg) => {
        const bytes = serializeMessage(msg);
        expect(parseMessage(bytes)).toEqual(msg);
        expect(toHex(serializeMessage(parseMessage(bytes)))).toBe(toHex(bytes));
        // web3.js reads the same bytes and writes them back unchanged.
        const web3 = VersionedMessage.deserialize(bytes);
        expect(web3 instanceof Message ? 'legacy' : web3.version).toBe(msg.version);
        expect(toHex(web3.serialize())).toBe(toHex(bytes));
      }),
      { numRuns: 500 },
    );
  });

  it('checks the header against the keys without the wire size limit', () => {
    const m = baseline();
    m.header = [0x7f, 0, 0];
    expect(() => parseMessage(encodeRawMessage(m))).toThrow(
      'header: needs 127 account keys, the message has 4',
    );
  });

  it('rejects an empty message and trailing bytes', () => {
    expect(() => parseMessage(new Uint8Array(0))).toThrow('message: input is empty');
    expect(() => parseMessage(Uint8Array.from([...encodeRawMessage(baseline()), 1]))).toThrow(
      'message: 1 trailing byte(s)',
    );
  });

  it('throws only CountersignError on random bytes, including ones that start like a v0 message', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.uint8Array({ maxLength: 600 }), (v0, rest) => {
        const bytes = v0 ? Uint8Array.from([0x80, ...rest]) : rest;
        try {
          parseMessage(bytes);
        } catch (e) {
          expect(e).toBeInstanceOf(CountersignError);
        }
      }),
      { numRuns: 3000 },
    );
  });
});
