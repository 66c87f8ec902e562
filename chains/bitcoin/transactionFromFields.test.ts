import * as btc from '@scure/btc-signer';
import * as bitcoin from 'bitcoinjs-lib';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { mixedFixture, PUB_A, PUB_B, toHex } from '../../test/vectors/bitcoin/vectors.js';
import { serializePsbt, signerAddresses, signingPlan, transactionFromFields, parsePsbt } from './index.js';
import type { BitcoinTransactionFields } from './index.js';

const fx = mixedFixture();

function fields(): BitcoinTransactionFields {
  return {
    version: 2,
    inputs: [0, 1, 2, 3].map((vout) => ({
      txid: fx.funding.getId(),
      vout,
      sequence: 0xfffffffd,
      value: vout === 0 ? '' : String(fx.prevValues[vout]),
      scriptPubKey: vout === 0 ? '' : toHex(fx.prevScripts[vout]!),
      previousTransaction: vout === 0 ? fx.funding.toBuffer() : new Uint8Array(0),
    })),
    outputs: [
      { value: '950000', address: signerAddresses(PUB_B, 'regtest').P2WPKH, scriptPubKey: '' },
      { value: '40000', address: signerAddresses(PUB_A, 'regtest').P2TR, scriptPubKey: '' },
    ],
    locktime: 800_000,
    network: 'REGTEST',
  };
}

describe('transactionFromFields', () => {
  it('builds the same unsigned transaction and sighashes as the bitcoinjs fixture', () => {
    const built = transactionFromFields(fields());
    const bytes = serializePsbt(built);
    const ref = bitcoin.Psbt.fromBuffer(fx.psbt);
    expect(toHex(built.global.entries[0]!.value)).toBe(toHex(ref.data.globalMap.unsignedTx.toBuffer()));
    const ours = signingPlan(parsePsbt(bytes), { publicKey: PUB_A }).inputs.map((p) => toHex(p.digest));
    const theirs = signingPlan(parsePsbt(fx.psbt), { publicKey: PUB_A }).inputs.map((p) => toHex(p.digest));
    expect(ours).toEqual(theirs);
    expect(btc.Transaction.fromPSBT(bytes).fee).toBe(10_000n);
  });

  it('names the field that is wrong', () => {
    const f = fields();
    f.outputs[0]!.address = signerAddresses(PUB_B, 'mainnet').P2WPKH;
    expect(() => transactionFromFields(f)).toThrow('outputs[0].address');
    const g = fields();
    g.inputs[0]!.previousTransaction = new Uint8Array(0);
    let err: unknown;
    try {
      transactionFromFields(g);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CountersignError);
    expect((err as CountersignError).field).toBe('inputs[0].script_pub_key');
  });
});
