import * as btc from '@scure/btc-signer';
import * as bitcoin from 'bitcoinjs-lib';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { editPsbt, mixedFixture, PUB_A, PUB_B } from '../../test/vectors/bitcoin/vectors.js';
import { describeTransaction } from './describeTransaction.js';
import { fee } from './fee.js';
import { parsePsbt } from './parsePsbt.js';
import { signerAddresses } from './signerAddresses.js';

const fx = mixedFixture();
const psbt = parsePsbt(fx.psbt);

describe('describeTransaction', () => {
  it('gives the bitcoin.tx facts with regtest addresses', () => {
    const facts = describeTransaction(psbt, 'regtest', PUB_A);
    const ref = bitcoin.Psbt.fromBuffer(fx.psbt, { network: bitcoin.networks.regtest });
    expect(facts['version']).toBe(2);
    expect(facts['inputs']).toEqual(
      [0, 1, 2, 3].map((vout) => ({ tx_id: fx.funding.getId(), vout, sequence: 0xfffffffd })),
    );
    expect(facts['outputs']).toEqual([
      {
        value: 950_000n,
        script_pubkey: Buffer.from(ref.txOutputs[0]!.script).toString('hex'),
        address: signerAddresses(PUB_B, 'regtest').P2WPKH,
        address_type: 'P2WPKH',
      },
      {
        value: 40_000n,
        script_pubkey: Buffer.from(ref.txOutputs[1]!.script).toString('hex'),
        address: signerAddresses(PUB_A, 'regtest').P2TR,
        address_type: 'P2TR',
      },
    ]);
    expect(ref.txOutputs.map((o) => o.address)).toEqual([
      signerAddresses(PUB_B, 'regtest').P2WPKH,
      signerAddresses(PUB_A, 'regtest').P2TR,
    ]);
    expect(facts['locktime']).toEqual({ amount: 800_000n, type: 'BLOCK_HEIGHT' });
    expect(facts['fee']).toBe(10_000n);
    expect(fee(psbt)).toBe(btc.Transaction.fromPSBT(fx.psbt).fee);
  });

  it('uses mainnet and testnet encodings', () => {
    const main = describeTransaction(psbt, 'mainnet')['outputs'] as { address: string }[];
    const test = describeTransaction(psbt, 'testnet')['outputs'] as { address: string }[];
    expect(main[1]!.address.startsWith('bc1p')).toBe(true);
    expect(test[0]!.address.startsWith('tb1q')).toBe(true);
  });

  it('fee needs the UTXO of every input', () => {
    const bytes = editPsbt(fx.psbt, (m) => (m.inputs[3]!.entries = []));
    let err: unknown;
    try {
      fee(parsePsbt(bytes));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CountersignError);
    expect((err as CountersignError).code).toBe('BITCOIN_MISSING_UTXO');
    expect((err as CountersignError).field).toBe('inputs[3].witness_utxo');
  });
});
