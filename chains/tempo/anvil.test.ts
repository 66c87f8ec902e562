/**
 * Executes countersign-built Tempo transactions on a real node: anvil 1.7.1 `--network tempo`.
 * test/helpers/anvil.ts always passes `--hardfork prague`, which tempo mode refuses ("Unknown
 * hardfork"), so this suite spawns the binary itself. The dev accounts hold TIP-20 balances of the
 * tokens at 0x20c0…0000–0003 (chains.md 6.1).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressFromPublicKey } from '../ethereum/index.js';
import { isValidPrivateKey, publicKeyOf, signDigest } from '../../src/shared/secp256k1.js';
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

const PATH_USD = '0x20c0000000000000000000000000000000000000';
const ALPHA_USD = '0x20c0000000000000000000000000000000000001';
const ALICE = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';
const BOB = '0x90F79bf6EB2c4f870365E785982E1f101E93b906';

let child: ChildProcess | undefined;
let rpcUrl = '';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function rpc<T>(method: string, params: unknown[]): Promise<T> {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(5_000),
  });
  const json = (await res.json()) as { result?: T; error?: { message: string } };
  if (json.error !== undefined) throw new Error(`${method}: ${json.error.message}`);
  return json.result as T;
}

beforeAll(async () => {
  const require = createRequire(import.meta.url);
  const binary = join(dirname(require.resolve('@foundry-rs/anvil-linux-amd64/package.json')), 'bin', 'anvil');
  const port = await freePort();
  rpcUrl = `http://127.0.0.1:${port}`;
  child = spawn(binary, ['--network', 'tempo', '--host', '127.0.0.1', '--port', String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`anvil exited with ${child.exitCode}`);
    try {
      await rpc('eth_chainId', []);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error('anvil --network tempo did not answer');
});

afterAll(async () => {
  const c = child;
  if (c === undefined || c.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    c.once('exit', () => resolve());
    c.kill('SIGTERM');
  });
});

const word = (h: string) => h.replace(/^0x/, '').toLowerCase().padStart(64, '0');
const transfer = (to: string, amount: bigint) => hex(`0xa9059cbb${word(to)}${word(amount.toString(16))}`);

async function balance(token: string, owner: string): Promise<bigint> {
  return BigInt(await rpc<string>('eth_call', [{ to: token, data: `0x70a08231${word(owner)}` }, 'latest']));
}

function sign(digest: Uint8Array, key: Uint8Array): TempoSignature {
  const { compact, recovery } = signDigest(digest, key);
  return { r: compact.subarray(0, 32), s: compact.subarray(32), yParity: recovery };
}

async function mined(signed: Uint8Array): Promise<{ status: string; type: string; logs: unknown[] }> {
  const hash = await rpc<string>('eth_sendRawTransaction', [to0x(signed)]);
  for (let i = 0; i < 100; i++) {
    const receipt = await rpc<{ status: string; type: string; logs: unknown[] } | null>(
      'eth_getTransactionReceipt',
      [hash],
    );
    if (receipt !== null) return receipt;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${hash} was not mined`);
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
