/**
 * Executes countersign-built Tempo transactions on a real node: anvil 1.7.1 `--network tempo`
 * (test/helpers/anvil-tempo.ts). The dev accounts hold TIP-20 balances of the tokens at
 * 0x20c0…0000–0003 (chains.md 6.1).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressFromPublicKey } from '../ethereum/index.js';
import { isValidPrivateKey, publicKeyOf, signDigest } from '../../src/shared/secp256k1.js';
import {
  ALPHA_USD,
  PATH_USD,
  sendAndMine,
  startTempoAnvil,
  tokenBalance,
  transferData,
  type RunningTempoAnvil,
} from '../../test/helpers/anvil-tempo.js';
import {
  DEV_ADDRESS_0,
  DEV_ADDRESS_1,
  DEV_KEY_0,
  DEV_KEY_1,
  hex,
  to0x,
} from '../../test/vectors/tempo/vectors.js';
import {
  assemble,
  feePayerDigest,
  senderDigest,
  serializeUnsignedTransaction,
  transactionFromFields,
  verifySignedTransaction,
  type TempoSignature,
  type TempoTransactionFields,
} from './index.js';

const ALICE = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';
const BOB = '0x90F79bf6EB2c4f870365E785982E1f101E93b906';

let node: RunningTempoAnvil;

beforeAll(async () => {
  node = await startTempoAnvil();
});

afterAll(async () => {
  await node?.stop();
});

const rpc = <T>(method: string, params: unknown[]): Promise<T> => node.rpc<T>(method, params);
const word = (h: string) => h.replace(/^0x/, '').toLowerCase().padStart(64, '0');
const transfer = (to: string, amount: bigint) => hex(transferData(to, amount));
const balance = (token: string, owner: string) => tokenBalance(node, token, owner);
const mined = (signed: Uint8Array) => sendAndMine(node, to0x(signed));

function sign(digest: Uint8Array, key: Uint8Array): TempoSignature {
  const { compact, recovery } = signDigest(digest, key);
  return { r: compact.subarray(0, 32), s: compact.subarray(32), yParity: recovery };
}

function fields(patch: Partial<TempoTransactionFields>): TempoTransactionFields {
  return {
    chainId: '31337',
    nonce: '0',
    nonceKey: '',
    gasLimit: '500000',
    maxFeePerGas: '20000000000',
    maxPriorityFeePerGas: '1',
    calls: [],
    accessList: [],
    validBefore: '',
    validAfter: '',
    feeToken: '',
    sponsored: false,
    ...patch,
  };
}

describe('Tempo transactions on anvil --network tempo', () => {
  it('mines a batch of two TIP-20 transfers from a dev account', async () => {
    const nonce = BigInt(await rpc<string>('eth_getTransactionCount', [DEV_ADDRESS_0, 'latest']));
    const now = Number(
      BigInt((await rpc<{ timestamp: string }>('eth_getBlockByNumber', ['latest', false])).timestamp),
    );
    const tx = transactionFromFields(
      fields({
        nonce: nonce.toString(),
        calls: [
          { to: ALPHA_USD, value: '', data: transfer(ALICE, 1_000n) },
          { to: ALPHA_USD, value: '', data: transfer(BOB, 2_000n) },
        ],
        feeToken: ALPHA_USD,
        validAfter: String(now - 60),
        validBefore: String(now + 3_600),
      }),
    );
    const unsigned = serializeUnsignedTransaction(tx);
    const signed = assemble(tx, sign(senderDigest(tx), hex(DEV_KEY_0)));
    const { hash } = verifySignedTransaction(signed, unsigned, DEV_ADDRESS_0);
    const [alice, bob] = [await balance(ALPHA_USD, ALICE), await balance(ALPHA_USD, BOB)];

    const receipt = await mined(signed);
    expect(receipt).toMatchObject({ status: '0x1', type: '0x76' });
    expect(receipt.logs.length).toBeGreaterThanOrEqual(2);
    expect(await rpc<{ hash: string }>('eth_getTransactionByHash', [to0x(hash)])).toMatchObject({
      hash: to0x(hash),
    });
    expect(await balance(ALPHA_USD, ALICE)).toBe(alice + 1_000n);
    expect(await balance(ALPHA_USD, BOB)).toBe(bob + 2_000n);
  });

  it('mines a transaction on an independent nonce lane (nonce key 7, nonce 0)', async () => {
    const tx = transactionFromFields(
      fields({
        nonceKey: '7',
        nonce: '0',
        calls: [{ to: PATH_USD, value: '', data: transfer(ALICE, 1n) }],
        feeToken: PATH_USD,
      }),
    );
    const receipt = await mined(assemble(tx, sign(senderDigest(tx), hex(DEV_KEY_0))));
    expect(receipt.status).toBe('0x1');
  });

  it('mines a sponsored transaction from an empty account; the fee payer pays the fee', async () => {
    let key: Uint8Array;
    do key = new Uint8Array(randomBytes(32));
    while (!isValidPrivateKey(key));
    const sender = addressFromPublicKey(publicKeyOf(key, false));
    expect(await balance(PATH_USD, sender)).toBe(0n);
    const call = { to: PATH_USD, value: '', data: hex(`0x70a08231${word(DEV_ADDRESS_1)}`) };

    // Negative control: unsponsored, the empty account cannot pay.
    const alone = transactionFromFields(fields({ calls: [call], feeToken: PATH_USD }));
    await expect(
      rpc('eth_sendRawTransaction', [to0x(assemble(alone, sign(senderDigest(alone), key)))]),
    ).rejects.toThrow();

    const tx = transactionFromFields(fields({ calls: [call], feeToken: PATH_USD, sponsored: true }));
    const unsigned = serializeUnsignedTransaction(tx);
    const senderSig = sign(senderDigest(tx), key);
    const signed = assemble(tx, senderSig, sign(feePayerDigest(tx, sender), hex(DEV_KEY_1)));
    const verified = verifySignedTransaction(signed, unsigned, sender, { expectedFeePayer: DEV_ADDRESS_1 });
    expect(verified.feePayer).toBe(DEV_ADDRESS_1);

    const payerBefore = await balance(PATH_USD, DEV_ADDRESS_1);
    const receipt = await mined(signed);
    expect(receipt.status).toBe('0x1');
    // anvil reports feePayer = sender in the receipt (chains.md 2, pitfalls); balances tell the truth.
    expect(await balance(PATH_USD, sender)).toBe(0n);
    expect(await balance(PATH_USD, DEV_ADDRESS_1)).toBeLessThan(payerBefore);
  });
});
