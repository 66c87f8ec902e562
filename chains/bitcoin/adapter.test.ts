import * as bitcoin from 'bitcoinjs-lib';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import {
  KEY_A,
  mixedFixture,
  PUB_A,
  PUB_B,
  signPlan,
  toHex,
  validator,
} from '../../test/vectors/bitcoin/vectors.js';
import { bitcoinAdapter, finalizeAndExtract, parsePsbt, signerAddresses } from './index.js';

const fx = mixedFixture();

describe('bitcoinAdapter', () => {
  const adapter = bitcoinAdapter;
  const addr = signerAddresses(PUB_A, 'regtest');
  const signer = { publicKey: PUB_A, network: 'regtest' as const };

  it('parse → describe → digests → sign → assemble → verify', () => {
    const tx = adapter.parse(fx.psbt);
    expect(adapter.describe(tx, signer)['fee']).toBe(10_000n);
    const digests = adapter.digests(tx, signer);
    expect(digests.map((d) => d.scheme)).toEqual(['ECDSA_SECP256K1', 'ECDSA_SECP256K1', 'SCHNORR_BIP340']);
    const sigs = signPlan({ inputs: digests.map((d) => ({ scheme: d.scheme, digest: d.payload })) }, KEY_A);
    const signed = adapter.assemble(tx, sigs, signer);
    expect(bitcoin.Psbt.fromBuffer(signed).validateSignaturesOfInput(2, validator)).toBe(true);
    const verified = adapter.verify(signed, fx.psbt, { ...signer, address: addr.P2TR });
    expect(verified.signer).toBe(addr.P2TR);
    expect(verified.signatures).toEqual(sigs);
    // Named by key rather than address: the address of the first signed input's type.
    expect(adapter.verify(signed, fx.psbt, signer).signer).toBe(addr.P2PKH);
    expect(toHex(verified.hash)).toBe(toHex(finalizeAndExtractTxid(signed)));
  });

  it('verify refuses an expected signer that is not an address of the key', () => {
    const tx = adapter.parse(fx.psbt);
    const signed = adapter.assemble(
      tx,
      signPlan(
        { inputs: adapter.digests(tx, signer).map((d) => ({ scheme: d.scheme, digest: d.payload })) },
        KEY_A,
      ),
      signer,
    );
    expect(() =>
      adapter.verify(signed, fx.psbt, { ...signer, address: signerAddresses(PUB_B, 'regtest').P2WPKH }),
    ).toThrow(CountersignError);
    expect(() =>
      adapter.verify(signed, fx.psbt, { ...signer, address: signerAddresses(PUB_A, 'mainnet').P2WPKH }),
    ).toThrow(CountersignError);
  });
});

/** The txid survives finalization: signatures are not part of it. */
function finalizeAndExtractTxid(signed: Uint8Array): Uint8Array {
  try {
    return finalizeAndExtract(parsePsbt(signed)).txid;
  } catch {
    // input 3 (key B) is unsigned, so finalization fails; the unsigned tx id is the same.
    const t = bitcoin.Psbt.fromBuffer(signed).data.globalMap.unsignedTx.toBuffer();
    return Uint8Array.from(Buffer.from(bitcoin.Transaction.fromBuffer(t).getId(), 'hex'));
  }
}
