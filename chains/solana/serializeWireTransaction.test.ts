import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { toHex } from '../../test/vectors/solana/keys.js';
import { instructionMixes } from '../../test/vectors/solana/web3.js';
import { messageFromFields } from './messageFromFields.js';
import { serializeWireTransaction } from './serializeWireTransaction.js';
import { unsignedTransaction } from './unsignedTransaction.js';

describe('serializeWireTransaction', () => {
  const tx = unsignedTransaction(messageFromFields(instructionMixes[1]!.fields));

  it('writes the slot count, the slots as given and the exact message bytes', () => {
    const slots = [new Uint8Array(64).fill(1), new Uint8Array(64).fill(2)];
    const wire = serializeWireTransaction({ ...tx, signatures: slots });
    expect(toHex(wire)).toBe(`02${'01'.repeat(64)}${'02'.repeat(64)}${toHex(tx.messageBytes)}`);
  });

  it('refuses a slot count that differs from the header and a slot that is not 64 bytes', () => {
    expect(() => serializeWireTransaction({ ...tx, signatures: tx.signatures.slice(1) })).toThrow(
      '1 signature slot(s) but the message requires 2',
    );
    expect(() =>
      serializeWireTransaction({ ...tx, signatures: [new Uint8Array(64), new Uint8Array(63)] }),
    ).toThrow(CountersignError);
  });
});
