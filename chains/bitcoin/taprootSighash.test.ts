import * as btc from '@scure/btc-signer';
import { describe, expect, it } from 'vitest';
import { bip341, hex, toHex } from '../../test/vectors/bitcoin/vectors.js';
import { parseTransaction } from './parseTransaction.js';
import { taprootSighash } from './taprootSighash.js';

const v = bip341.keyPathSpending;
const tx = parseTransaction(hex(v.rawUnsignedTx), { field: 'tx', allowWitness: true });
const spent = v.utxosSpent.map((u) => ({ value: BigInt(u.amountSats), script: hex(u.scriptPubKey) }));

describe('taprootSighash (BIP-341 wallet-test-vectors keyPathSpending)', () => {
  it.each(v.inputSpending)('input $txinIndex, hash type $hashType', ({ txinIndex, hashType, sigHash }) => {
    expect(toHex(taprootSighash(tx, txinIndex, spent, hashType))).toBe(sigHash);
  });

  it.each(v.inputSpending)(
    'agrees with @scure/btc-signer for input $txinIndex',
    ({ txinIndex, hashType }) => {
      const scure = btc.Transaction.fromRaw(hex(v.rawUnsignedTx), {
        disableScriptCheck: true,
        allowUnknownOutputs: true,
        allowUnknownInputs: true,
      });
      const theirs = scure.preimageWitnessV1(
        txinIndex,
        spent.map((s) => s.script),
        hashType,
        spent.map((s) => s.value),
      );
      expect(toHex(taprootSighash(tx, txinIndex, spent, hashType))).toBe(toHex(theirs));
    },
  );

  it('commits to the amount of another input', () => {
    const changed = spent.map((s, i) => (i === 2 ? { ...s, value: s.value + 1n } : s));
    expect(toHex(taprootSighash(tx, 4, changed, 0))).not.toBe(
      v.inputSpending.find((s) => s.txinIndex === 4)!.sigHash,
    );
  });

  it('rejects an invalid hash type and SIGHASH_SINGLE without a matching output', () => {
    expect(() => taprootSighash(tx, 4, spent, 0x04)).toThrow('invalid BIP-341 sighash type');
    expect(() => taprootSighash(tx, 5, spent, 0x03)).toThrow('has no output');
  });
});
