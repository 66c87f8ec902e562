/**
 * eth_send_transaction end to end, single calls paid by the account (batches and sponsored sends:
 * test/eth-send-sponsored.test.ts): the real embedded service (SQLite, HTTP) with
 * `--chain-rpc eip155:31337=<anvil>`, Turnkey's unmodified @turnkey/sdk-server, and a real anvil.
 * Every send must end in a receipt whose hash is the one the service reported, and the nonces the
 * allocator hands out must be consecutive with no gap left by refused requests.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Turnkey } from '@turnkey/sdk-server';
import {
  createPublicClient,
  encodeDeployData,
  http,
  parseEther,
  toHex,
  type Hex,
  type PublicClient,
} from 'viem';
import { startAnvil, type RunningAnvil } from './helpers/anvil.js';
import { ethAddressOf, startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { envelope, post } from './helpers/http.js';
import { UUID_V7 } from './helpers/ids.js';
import { getNextNonce, reachedStatus, settled, statusIdOf, submitEthSend } from './helpers/eth-send.js';
import { insertUserWithApiKey } from './helpers/users.js';

const CAIP2 = 'eip155:31337';
let anvil: RunningAnvil;
let h: EmbeddedHarness;
let chain: PublicClient;
let from: Hex;

/** A fresh recipient per test, so balances start at zero. */
function recipient(tag: number): Hex {
  return `0x${'11'.repeat(18)}${tag.toString(16).padStart(4, '0')}` as Hex;
}

/** The nonce the service's next send from `from` would take. */
const nextNonce = () => getNextNonce(h, { address: from, caip2: CAIP2 });

async function expectIncluded(id: string, to: Hex, value: bigint) {
  const s = await settled(h, id);
  expect(s.error).toBeUndefined();
  expect(s.txStatus).toBe('INCLUDED');
  const receipt = await chain.getTransactionReceipt({ hash: s.eth?.txHash as Hex });
  expect(receipt.transactionHash).toBe(s.eth?.txHash);
  expect(receipt.status).toBe('success');
  expect(receipt.from).toBe(from.toLowerCase());
  expect(await chain.getBalance({ address: to })).toBe(value);
  return chain.getTransaction({ hash: receipt.transactionHash });
}

beforeAll(async () => {
  anvil = await startAnvil();
  h = await startEmbedded({ chainRpc: new Map([[CAIP2, anvil.rpcUrl]]) });
  chain = createPublicClient({ transport: http(anvil.rpcUrl) });
  from = ethAddressOf(h);
  await chain.request({
    method: 'anvil_setBalance' as never,
    params: [from, toHex(parseEther('1000'))] as never,
  });
});

afterAll(async () => {
  await h?.close();
  await anvil?.stop();
});

describe('eth_send_transaction (non-sponsored)', () => {
  it('a hand-built V1 body ends INCLUDED with the value transferred and the reported hash', async () => {
    const to = recipient(1);
    const res = await submitEthSend(h, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION', {
      from,
      caip2: CAIP2,
      to,
      value: '12345',
      data: '0x',
    });
    expect(res.status).toBe(200);
    const id = statusIdOf(res.json, 'ethSendTransactionResult');
    await expectIncluded(id, to, 12345n);
    // Every status it took is recorded, in order, with its time.
    const transitions = await h.service.store.listSendTransactionTransitions(id);
    expect(transitions.map((t) => t.status)).toEqual(['INITIALIZED', 'BROADCASTING', 'INCLUDED']);
    expect(transitions.map((t) => t.atMs)).toEqual([...transitions.map((t) => t.atMs)].sort((a, b) => a - b));
  });

  it('@turnkey/sdk-server ethSendTransaction (V2) ends INCLUDED; caller fees are kept as given', async () => {
    const c = h.service.credentials;
    const api = new Turnkey({
      apiBaseUrl: h.baseUrl,
      apiPublicKey: c.apiPublicKey,
      apiPrivateKey: c.apiPrivateKey,
      defaultOrganizationId: c.organizationId,
    }).apiClient();
    const to = recipient(2);
    const out = await api.ethSendTransaction({
      from,
      // anvil's chain id is not in the SDK's caip2 enum; the client sends whatever it is given.
      caip2: CAIP2 as 'eip155:1',
      calls: [{ to, value: '777' }],
      maxFeePerGas: '30000000000',
      maxPriorityFeePerGas: '1000000000',
    });
    // Time-ordered, so the sends' primary key grows at its end.
    expect(out.sendTransactionStatusId).toMatch(UUID_V7);
    const tx = await expectIncluded(out.sendTransactionStatusId, to, 777n);
    expect(tx.maxFeePerGas).toBe(30_000_000_000n);
    expect(tx.maxPriorityFeePerGas).toBe(1_000_000_000n);
    // Filled: estimate (21000 for a transfer) plus 20 %.
    expect(tx.gas).toBe(25_200n);
  });

  it('50 concurrent sends from one address land with consecutive nonces, all included', async () => {
    const first = await nextNonce();
    const to = recipient(3);
    const responses = await Promise.all(
      // Distinct values: identical bodies in one millisecond would be one activity (idempotency).
      Array.from({ length: 50 }, (_, i) =>
        submitEthSend(h, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2', {
          from,
          caip2: CAIP2,
          calls: [{ to, value: String(i + 1) }],
        }),
      ),
    );
    const ids = responses.map((r) => {
      expect(r.status).toBe(200);
      return statusIdOf(r.json, 'ethSendTransactionResultV2');
    });
    const statuses = await Promise.all(ids.map((id) => settled(h, id, 60_000)));
    const nonces = await Promise.all(
      statuses.map(async (s) => {
        expect(s.txStatus).toBe('INCLUDED');
        return (await chain.getTransaction({ hash: s.eth?.txHash as Hex })).nonce;
      }),
    );
    expect(nonces.map(BigInt).sort((a, b) => (a < b ? -1 : 1))).toEqual(
      Array.from({ length: 50 }, (_, i) => first + BigInt(i)),
    );
    expect(await chain.getBalance({ address: to })).toBe(1275n);
    expect(await nextNonce()).toBe(first + 50n);
  });

  it('a policy-denied send takes no nonce: the next send uses the next one', async () => {
    // A non-root user (inserted through the store, as test/policies.test.ts does) whose only policy
    // allows sends to one recipient; the gate sees the filled eth.tx.
    const c = h.service.credentials;
    const { userId, key } = await insertUserWithApiKey(h.service.store, {
      organizationId: c.organizationId,
      name: 'sender',
    });
    const allowed = recipient(5);
    const policy = await post(
      h.baseUrl,
      c,
      '/public/v1/submit/create_policy',
      envelope('ACTIVITY_TYPE_CREATE_POLICY_V3', c.organizationId, {
        policyName: 'sender may pay the allowed recipient',
        effect: 'EFFECT_ALLOW',
        consensus: `approvers.any(user, user.id == '${userId}')`,
        condition: `eth.tx.to == '${allowed}' && eth.tx.gas > 21000`,
        notes: '',
      }),
    );
    expect(policy.status).toBe(200);
    const asSender = (to: Hex, value: string) =>
      submitEthSend(
        h,
        'ACTIVITY_TYPE_ETH_SEND_TRANSACTION',
        { from, caip2: CAIP2, to, value },
        { keys: key },
      );
    const before = await nextNonce();
    const denied = await asSender(recipient(4), '1');
    expect(denied.status).toBe(403);
    expect(await nextNonce()).toBe(before);
    const ok = await asSender(allowed, '5');
    expect(ok.status).toBe(200);
    const tx = await expectIncluded(statusIdOf(ok.json, 'ethSendTransactionResult'), allowed, 5n);
    expect(BigInt(tx.nonce)).toBe(before);
  });

  it('a reverting call ends FAILED with the decoded revert reason', async () => {
    // Init code (12 bytes) copies the 37-byte runtime after it and returns it:
    //   PUSH1 0x25 PUSH1 0x0c PUSH1 0 CODECOPY PUSH1 0x25 PUSH1 0 RETURN
    // Runtime: for any call, revert with Error("nope") (ABI: selector 0x08c379a0, offset 0x20,
    // length 4, "nope" left-aligned), i.e. MSTORE each word then REVERT(0, 0x64):
    //   PUSH4 0x08c379a0 PUSH1 224 SHL PUSH1 0 MSTORE   PUSH1 0x20 PUSH1 4 MSTORE
    //   PUSH1 4 PUSH1 0x24 MSTORE   PUSH4 "nope" PUSH1 224 SHL PUSH1 0x44 MSTORE   PUSH1 0x64 PUSH1 0 REVERT
    const init = '0x6025600c60003960256000f3';
    const runtime = '6308c379a060e01b60005260206004526004602452636e6f706560e01b60445260646000fd';
    const data = encodeDeployData({ abi: [], bytecode: `${init}${runtime}` as Hex });
    const [deployer] = (await chain.request({ method: 'eth_accounts' as never })) as Hex[];
    const deployHash = (await chain.request({
      method: 'eth_sendTransaction' as never,
      params: [{ from: deployer, data }] as never,
    })) as Hex;
    const deployed = await chain.waitForTransactionReceipt({ hash: deployHash });
    const contract = deployed.contractAddress as Hex;
    expect(await chain.getCode({ address: contract })).toBe(`0x${runtime}`);

    // Without a gas limit the estimate reverts: refused up front, no nonce taken.
    const before = await nextNonce();
    const refused = await submitEthSend(h, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION', {
      from,
      caip2: CAIP2,
      to: contract,
      data: '0x01',
    });
    expect(refused.status).toBe(400);
    expect(String(refused.json.message)).toContain('parameters.gasLimit');
    expect(await nextNonce()).toBe(before);

    const res = await submitEthSend(h, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION', {
      from,
      caip2: CAIP2,
      to: contract,
      data: '0x01',
      gasLimit: '100000',
    });
    const s = await settled(h, statusIdOf(res.json, 'ethSendTransactionResult'));
    expect(s.txStatus).toBe('FAILED');
    expect(s.error).toEqual({
      message: 'execution reverted: nope',
      eth: {
        revertChain: [{ address: contract, errorType: 'native', displayMessage: 'execution reverted: nope' }],
      },
    });
    const receipt = await chain.getTransactionReceipt({ hash: s.eth?.txHash as Hex });
    expect(receipt.status).toBe('reverted');
  });

  const BAD: readonly [string, Record<string, unknown>, string, string][] = [
    ['unknown caip2', { caip2: 'eip155:1' }, 'FIELD_INVALID', 'parameters.caip2'],
    ['a non-EVM caip2', { caip2: 'solana:mainnet' }, 'FIELD_INVALID', 'parameters.caip2'],
    ['a malformed to address', { to: '0x1234' }, 'FIELD_INVALID', 'parameters.to'],
    [
      'a bad EIP-55 checksum',
      { to: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD' },
      'FIELD_INVALID',
      'parameters.to',
    ],
    ['a negative value', { value: '-1' }, 'FIELD_INVALID', 'parameters.value'],
    ['a non-decimal value', { value: '0x10' }, 'FIELD_INVALID', 'parameters.value'],
    ['a gas limit below 21000', { gasLimit: '20999' }, 'FIELD_INVALID', 'parameters.gasLimit'],
    // Gas is a uint64 in every client: 2^64 can never be sent.
    ['a gas limit of 2^64', { gasLimit: '18446744073709551616' }, 'FIELD_INVALID', 'parameters.gasLimit'],
    // 21000 + 16 (one non-zero byte) + 4 (one zero byte) = 21020 (EIP-2028)
    [
      'a gas limit below intrinsic with calldata',
      { gasLimit: '21019', data: '0x0100' },
      'FIELD_INVALID',
      'parameters.gasLimit',
    ],
    ['odd-length calldata', { data: '0x123' }, 'FIELD_INVALID', 'parameters.data'],
    [
      'from not in the organization',
      { from: '0x000000000000000000000000000000000000dEaD' },
      'SIGN_WITH_NOT_FOUND',
      'parameters.from',
    ],
  ];

  it.each(BAD)('refuses %s with the field named and no nonce taken', async (_, override, code, field) => {
    const before = await nextNonce();
    const res = await submitEthSend(h, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION', {
      from,
      caip2: CAIP2,
      to: recipient(6),
      value: '1',
      ...override,
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(String(res.json.message)).toContain(field);
    expect(JSON.stringify(res.json)).toContain(code === 'SIGN_WITH_NOT_FOUND' ? 'Could not find' : field);
    expect(await nextNonce()).toBe(before);
  });

  it('refuses a V2 send with no calls, naming parameters.calls', async () => {
    const before = await nextNonce();
    const res = await submitEthSend(h, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2', {
      from,
      caip2: CAIP2,
      calls: [],
    });
    expect(res.status).toBe(400);
    expect(String(res.json.message)).toContain('parameters.calls');
    expect(await nextNonce()).toBe(before);
  });

  it('a send the node refuses fails, and its nonce is filled so the sends after it still land', async () => {
    const first = await nextNonce();
    const startBlock = await chain.getBlockNumber({ cacheTime: 0 });
    const toA = recipient(10);
    const toB = recipient(11);
    // B takes nonce n + 1 first (a caller's nonce), so when A (nonce n) is refused, n cannot simply be
    // given back: a later nonce is out, and B would wait behind n for ever.
    const b = await submitEthSend(h, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION', {
      from,
      caip2: CAIP2,
      to: toB,
      value: '2',
      nonce: String(first + 1n),
    });
    // More gas than a block holds: every node refuses these bytes, however often they are retried.
    const a = await submitEthSend(h, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION', {
      from,
      caip2: CAIP2,
      to: toA,
      value: '1',
      gasLimit: '40000000',
      nonce: String(first),
    });
    const idA = statusIdOf(a.json, 'ethSendTransactionResult');
    const failed = await settled(h, idA);
    expect(failed.txStatus).toBe('FAILED');
    expect(failed.error?.message).toMatch(/^refused by the node: .*gas/i);
    expect(await h.service.store.listSendTransactionTransitions(idA)).toEqual([
      { status: 'INITIALIZED', errorMessage: null, atMs: expect.any(Number) },
      { status: 'FAILED', errorMessage: failed.error?.message, atMs: expect.any(Number) },
    ]);
    const ok = await expectIncluded(statusIdOf(b.json, 'ethSendTransactionResult'), toB, 2n);
    expect(BigInt(ok.nonce)).toBe(first + 1n);
    // Nonce n went to the service's zero-value transfer to the account itself.
    const latest = await chain.getBlockNumber({ cacheTime: 0 });
    const txs = [];
    for (let n = startBlock + 1n; n <= latest; n++)
      txs.push(...(await chain.getBlock({ blockNumber: n, includeTransactions: true })).transactions);
    const filler = txs.find((t) => t.from === from.toLowerCase() && BigInt(t.nonce) === first);
    expect(
      filler,
      `mined from ${from} since block ${startBlock}: ${txs.map((t) => `${t.nonce}→${t.to}`).join(', ')}`,
    ).toMatchObject({ to: from.toLowerCase(), value: 0n, gas: 21_000n });
    expect(await chain.getBalance({ address: toA })).toBe(0n);
    expect(await nextNonce()).toBe(first + 2n);
  });

  it('a refused send that holds the last nonce gives it back: the next send takes it', async () => {
    const first = await nextNonce();
    const a = await submitEthSend(h, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION', {
      from,
      caip2: CAIP2,
      to: recipient(12),
      value: '1',
      gasLimit: '40000000',
    });
    expect((await settled(h, statusIdOf(a.json, 'ethSendTransactionResult'))).txStatus).toBe('FAILED');
    expect(await nextNonce()).toBe(first);
    const b = await submitEthSend(h, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION', {
      from,
      caip2: CAIP2,
      to: recipient(13),
      value: '3',
    });
    const tx = await expectIncluded(statusIdOf(b.json, 'ethSendTransactionResult'), recipient(13), 3n);
    expect(BigInt(tx.nonce)).toBe(first);
  });

  it('after a restart, a dropped send is broadcast again with its stored bytes, never re-signed', async () => {
    const rpc = (method: string, params: unknown[] = []) =>
      chain.request({ method: method as never, params: params as never });
    // Mining off, so the broadcast transaction waits in the pool, where it is then lost.
    await rpc('evm_setAutomine', [false]);
    const to = recipient(9);
    const res = await submitEthSend(h, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION', {
      from,
      caip2: CAIP2,
      to,
      value: '9',
    });
    const id = statusIdOf(res.json, 'ethSendTransactionResult');
    await reachedStatus(h, id, 'BROADCASTING', { polls: 100, intervalMs: 50 });
    const row = await h.service.store.getSendTransactionById(id);
    await rpc('anvil_dropTransaction', [row?.txHash]);
    const dataDir = h.dataDir;
    await h.close({ keepDir: true });
    await rpc('evm_setAutomine', [true]);
    h = await startEmbedded({ dataDir, chainRpc: new Map([[CAIP2, anvil.rpcUrl]]) });
    const s = await settled(h, id);
    expect(s).toEqual({ txStatus: 'INCLUDED', eth: { txHash: row?.txHash } });
    expect(BigInt((await chain.getTransaction({ hash: row?.txHash as Hex })).nonce)).toBe(row?.nonce);
    expect(await chain.getBalance({ address: to })).toBe(9n);
  });
});
