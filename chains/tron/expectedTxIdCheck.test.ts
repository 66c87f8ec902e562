import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { hex, toHex, transactionVectors } from '../../test/vectors/tron/vectors.js';
import { expectedTxIdCheck } from './expectedTxIdCheck.js';

const v = transactionVectors.transactions[0]!;
const raw = hex(v.rawDataHex);

describe('expectedTxIdCheck', () => {
  it("returns sha256(raw_data) when the caller's txID matches (tronweb's txID)", () => {
    expect(toHex(expectedTxIdCheck(raw, v.txID, 'tron.tx_id'))).toBe(v.txID);
    expect(toHex(expectedTxIdCheck(raw, `0x${v.txID.toUpperCase()}`, 'tron.tx_id'))).toBe(v.txID);
  });

  it('rejects a txID that differs, naming the field and the computed id', () => {
    const other = transactionVectors.transactions[1]!.txID;
    let err: unknown;
    try {
      expectedTxIdCheck(raw, other, 'tron.expected_tx_id');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CountersignError);
    expect((err as CountersignError).code).toBe('TRON_TXID_MISMATCH');
    expect((err as CountersignError).field).toBe('tron.expected_tx_id');
    expect((err as CountersignError).message).toContain(v.txID);
  });

  it('rejects a txID of the wrong length or alphabet', () => {
    for (const bad of ['', v.txID.slice(2), `${v.txID}00`, `g${v.txID.slice(1)}`]) {
      expect(() => expectedTxIdCheck(raw, bad, 'f')).toThrow('f: must be a 32-byte hex transaction id');
    }
  });
});
