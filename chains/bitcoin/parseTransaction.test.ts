import fc from 'fast-check';
import * as bitcoin from 'bitcoinjs-lib';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { bip341, hex, toHex } from '../../test/vectors/bitcoin/vectors.js';
import { parseTransaction } from './parseTransaction.js';
import { serializeTransaction } from './serializeTransaction.js';
import { txid } from './txid.js';
import { wtxid } from './wtxid.js';

describe('parseTransaction / serializeTransaction', () => {
  it('round-trips the BIP-341 vector transaction and agrees with bitcoinjs on its txid', () => {
    const raw = hex(bip341.keyPathSpending.rawUnsignedTx);
    const tx = parseTransaction(raw, { field: 'tx', allowWitness: true });
    expect(toHex(serializeTransaction(tx, { witness: true }))).toBe(toHex(raw));
    expect(toHex(txid(tx))).toBe(bitcoin.Transaction.fromBuffer(raw).getId());
  });

  it('round-trips a segwit transaction; txid strips the witness, wtxid keeps it', () => {
    const t = new bitcoin.Transaction();
    t.addInput(new Uint8Array(32).fill(1), 3, 0xfffffffe);
    t.addInput(new Uint8Array(32).fill(2), 0);
    t.addOutput(Uint8Array.of(0x51), 5n);
    t.setWitness(0, [Uint8Array.of(1, 2), new Uint8Array(0)]);
    const raw = t.toBuffer();
    const tx = parseTransaction(raw, { field: 'tx', allowWitness: true });
    expect(tx.inputs[0]!.witness).toHaveLength(2);
    expect(toHex(serializeTransaction(tx, { witness: true }))).toBe(toHex(raw));
    expect(toHex(txid(tx))).toBe(t.getId());
    expect(toHex(wtxid(tx))).toBe(toHex(t.getHash(true).reverse()));
  });

  it('rejects trailing bytes, a bad segwit flag, superfluous witnesses and values above 21M BTC', () => {
    const raw = hex(bip341.keyPathSpending.rawUnsignedTx);
    expect(() => parseTransaction(Uint8Array.of(...raw, 0), { field: 'tx', allowWitness: true })).toThrow(
      'trailing',
    );
    expect(() =>
      parseTransaction(hex('0200000000020000000000'), { field: 'tx', allowWitness: true }),
    ).toThrow('segwit flag');
    const empty = `02000000000101${'11'.repeat(32)}00000000000000000000000000000000`;
    expect(() => parseTransaction(hex(`${empty}`), { field: 'tx', allowWitness: true })).toThrow(
      CountersignError,
    );
    const big = `0200000000` + `01ffffffffffffffff00` + `00000000`;
    expect(() => parseTransaction(hex(big), { field: 'tx', allowWitness: false })).toThrow(
      'exceeds 21 million',
    );
  });

  it('random bytes only ever throw CountersignError', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.boolean(), (bytes, allowWitness) => {
        try {
          const tx = parseTransaction(bytes, { field: 'tx', allowWitness });
          expect(toHex(serializeTransaction(tx, { witness: allowWitness }))).toBe(toHex(bytes));
        } catch (e) {
          expect(e).toBeInstanceOf(CountersignError);
        }
      }),
      { numRuns: 3000 },
    );
  });
});
