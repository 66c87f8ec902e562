/**
 * eth_send_transaction through the gas station, end to end: the real embedded service with a real
 * anvil (Prague), Turnkey's unmodified @turnkey/sdk-server, and the batch executor compiled from
 * contracts/. The service deploys the executor with its sponsor key on first use, the account
 * delegates to it (EIP-7702) inside the first sponsored transaction, and the sponsor pays every gas.
 */
import { randomUUID } from 'node:crypto';
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
import { batchExecutorAddress, decodeExecutorRevert } from '../src/service/send/batchExecutor.js';
import { startAnvil, type RunningAnvil } from './helpers/anvil.js';
import { ethAddressOf, startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { envelope, post } from './helpers/http.js';
import { getNonces, reachedStatus, settled, statusIdOf, submitEthSend } from './helpers/eth-send.js';
import { insertUserWithApiKey } from './helpers/users.js';

const CAIP2 = 'eip155:31337';
let anvil: RunningAnvil;
let h: EmbeddedHarness;
let chain: PublicClient;
let user: Hex;
let sponsor: Hex;
let counter: Hex;
let reverter: Hex;
let funder: Hex;

const rpc = (method: string, params: unknown[] = []) =>
  chain.request({ method: method as never, params: params as never }) as Promise<unknown>;

const nonces = (address: Hex) => getNonces(h, { address, caip2: CAIP2 });

/** Deploys `runtime` (hex without 0x) behind a 12-byte init code that copies and returns it. */
async function deploy(runtime: string): Promise<Hex> {
  const len = (runtime.length / 2).toString(16).padStart(2, '0');
  const init = `0x60${len}600c600039${`60${len}`}6000f3`;
  const hash = (await rpc('eth_sendTransaction', [
    { from: funder, data: encodeDeployData({ abi: [], bytecode: `${init}${runtime}` as Hex }) },
  ])) as Hex;
  const r = await chain.waitForTransactionReceipt({ hash });
  return r.contractAddress as Hex;
}

/** Storage word `slot` of `address` as a bigint. */
async function slot(address: Hex, n: number): Promise<bigint> {
  return BigInt((await chain.getStorageAt({ address, slot: toHex(n, { size: 32 }) })) ?? '0x0');
}

beforeAll(async () => {
  anvil = await startAnvil();
  h = await startEmbedded({ chainRpc: new Map([[CAIP2, anvil.rpcUrl]]) });
  chain = createPublicClient({ transport: http(anvil.rpcUrl) });
  user = ethAddressOf(h).toLowerCase() as Hex;
  sponsor = h.service.sponsorAddress;
  funder = ((await rpc('eth_accounts')) as Hex[])[0] as Hex;
  // Counter: slot 0 = the last caller, slot 1 += 1 per call.
  //   CALLER PUSH1 0 SSTORE  PUSH1 1 SLOAD PUSH1 1 ADD PUSH1 1 SSTORE  STOP
  counter = await deploy('3360005560015460010160015500');
  // Reverts every call with Error("nope") (as in test/eth-send.test.ts).
  reverter = await deploy('6308c379a060e01b60005260206004526004602452636e6f706560e01b60445260646000fd');
});

afterAll(async () => {
  await h?.close();
  await anvil?.stop();
});

describe('eth_send_transaction through the gas station', () => {
  it('refuses a sponsored send while the sponsor cannot pay, naming the chain, and takes no nonce', async () => {
    expect(await chain.getBalance({ address: sponsor })).toBe(0n);
    const before = await nonces(user);
    const res = await submitEthSend(h, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION', {
      from: user,
      caip2: CAIP2,
      to: counter,
      data: '0x',
      sponsor: true,
    });
    expect(res.status).toBe(400);
    expect(String(res.json.message)).toContain('parameters.caip2');
    expect(String(res.json.message)).toContain(`the sponsor ${sponsor}`);
    expect(await nonces(user)).toEqual(before);
    expect(await chain.getCode({ address: batchExecutorAddress() })).toBeUndefined();
  });

  it('a sponsored V1 send from an account holding zero ETH is included; the sponsor paid the gas', async () => {
    await rpc('anvil_setBalance', [sponsor, toHex(parseEther('10'))]);
    expect(await chain.getBalance({ address: user })).toBe(0n);
    const res = await submitEthSend(h, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION', {
      from: user,
      caip2: CAIP2,
      to: counter,
      value: '0',
      data: '0x',
      sponsor: true,
    });
    expect(res.status).toBe(200);
    const s = await settled(h, statusIdOf(res.json));
    expect(s).toEqual({ txStatus: 'INCLUDED', eth: { txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) } });
    const receipt = await chain.getTransactionReceipt({ hash: s.eth?.txHash as Hex });
    expect(receipt.transactionHash).toBe(s.eth?.txHash);
    expect(receipt.status).toBe('success');
    expect(receipt.from).toBe(sponsor);
    expect(receipt.to).toBe(user);
    const tx = await chain.getTransaction({ hash: receipt.transactionHash });
    // First batch: type 4, carrying the account's delegation to the executor.
    expect(tx.type).toBe('eip7702');
    expect(tx.authorizationList?.[0]?.address.toLowerCase()).toBe(batchExecutorAddress());
    expect(await chain.getCode({ address: user })).toBe(`0xef0100${batchExecutorAddress().slice(2)}`);
    // The call ran as the account, which still holds nothing: the sponsor paid all of the gas.
    expect(await slot(counter, 0)).toBe(BigInt(user));
    expect(await slot(counter, 1)).toBe(1n);
    expect(await chain.getBalance({ address: user })).toBe(0n);
    expect(await chain.getBalance({ address: sponsor })).toBe(
      parseEther('10') -
        // what the executor's deployment and this batch cost the sponsor, and nothing else
        (await gasPaidBy(sponsor)),
    );
    expect(await nonces(user)).toMatchObject({ gasStationNonce: 1n });
  });

  it('@turnkey/sdk-server ethSendTransaction (V2) sends a sponsored 2-call batch as one type-2 transaction', async () => {
    const c = h.service.credentials;
    const api = new Turnkey({
      apiBaseUrl: h.baseUrl,
      apiPublicKey: c.apiPublicKey,
      apiPrivateKey: c.apiPrivateKey,
      defaultOrganizationId: c.organizationId,
    }).apiClient();
    const out = await api.ethSendTransaction({
      from: user,
      caip2: CAIP2 as 'eip155:1',
      sponsor: true,
      calls: [{ to: counter }, { to: counter, data: '0x01' }],
    });
    const s = await settled(h, out.sendTransactionStatusId);
    expect(s.txStatus).toBe('INCLUDED');
    const tx = await chain.getTransaction({ hash: s.eth?.txHash as Hex });
    expect(tx.type).toBe('eip1559');
    expect(tx.from).toBe(sponsor);
    expect(await slot(counter, 1)).toBe(3n);
    expect(await chain.getBalance({ address: user })).toBe(0n);
    expect(await nonces(user)).toMatchObject({ gasStationNonce: 2n });
  });

  it('replaying a signed batch is refused by the executor (its gas-station nonce is used)', async () => {
    const res = await submitEthSend(h, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION', {
      from: user,
      caip2: CAIP2,
      to: counter,
      sponsor: true,
    });
    const s = await settled(h, statusIdOf(res.json));
    expect(s.txStatus).toBe('INCLUDED');
    const sent = await chain.getTransaction({ hash: s.eth?.txHash as Hex });
    // The same execute(...) calldata, sent again by anyone: the executor refuses it.
    const replay = { from: funder, to: user, data: sent.input };
    const err = await rpc('eth_call', [replay, 'latest']).then(
      () => undefined,
      (e: unknown) => e as { walk: (f: (x: unknown) => boolean) => unknown },
    );
    const data = revertData(err);
    expect(decodeExecutorRevert(data)).toMatch(/^gas-station nonce 2 was already used \(next is 3\)$/);
    const hash = (await rpc('eth_sendTransaction', [{ ...replay, gas: toHex(200_000) }])) as Hex;
    expect((await chain.waitForTransactionReceipt({ hash })).status).toBe('reverted');
    expect(await slot(counter, 1)).toBe(4n);
  });

  it('refuses an expired deadline up front, and the executor refuses one that passes before inclusion', async () => {
    const before = await nonces(user);
    const past = Math.floor(Date.now() / 1000) - 1;
    const refused = await submitEthSend(h, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION', {
      from: user,
      caip2: CAIP2,
      to: counter,
      sponsor: true,
      deadline: String(past),
    });
    expect(refused.status).toBe(400);
    expect(String(refused.json.message)).toContain('parameters.deadline');
    expect(String(refused.json.message)).toContain('has passed');
    expect(await nonces(user)).toEqual(before);

    // Valid when signed; the chain's clock passes it before the transaction is mined.
    await rpc('evm_setAutomine', [false]);
    const deadline = Math.floor(Date.now() / 1000) + 5;
    const res = await submitEthSend(h, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION', {
      from: user,
      caip2: CAIP2,
      to: counter,
      sponsor: true,
      deadline: String(deadline),
    });
    const id = statusIdOf(res.json);
    await reachedStatus(h, id, 'BROADCASTING', { polls: 200, intervalMs: 25 });
    await rpc('evm_setNextBlockTimestamp', [toHex(deadline + 10)]);
    await rpc('evm_mine');
    await rpc('evm_setAutomine', [true]);
    const s = await settled(h, id);
    expect(s.txStatus).toBe('FAILED');
    expect(s.error).toEqual({
      message: `batch deadline ${deadline} has passed`,
      eth: {
        revertChain: [
          { address: user, errorType: 'custom', displayMessage: `batch deadline ${deadline} has passed` },
        ],
      },
    });
    expect(await slot(counter, 1)).toBe(4n);
  });

  it('a batch whose second call reverts ends FAILED with the call and its decoded reason', async () => {
    const res = await submitEthSend(h, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2', {
      from: user,
      caip2: CAIP2,
      sponsor: true,
      calls: [{ to: counter }, { to: reverter, data: '0x01' }],
      // The estimate of the reverting call fails; a gas limit sends it anyway.
      gasLimit: '300000',
    });
    const s = await settled(h, statusIdOf(res.json));
    expect(s.txStatus).toBe('FAILED');
    expect(s.error).toEqual({
      message: 'call 1 reverted: execution reverted: nope',
      eth: {
        revertChain: [
          { address: user, errorType: 'custom', displayMessage: 'call 1 reverted: execution reverted: nope' },
          { address: reverter, errorType: 'native', displayMessage: 'execution reverted: nope' },
        ],
      },
    });
    // The whole batch reverted: the first call's effect is gone too.
    expect(await slot(counter, 1)).toBe(4n);
    expect((await chain.getTransactionReceipt({ hash: s.eth?.txHash as Hex })).status).toBe('reverted');
  });

  it('10 concurrent sponsored sends from a fresh account all land, delegating once, gas-station nonces 0..9', async () => {
    const fresh = await newEthereumKey();
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        submitEthSend(h, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2', {
          from: fresh,
          caip2: CAIP2,
          sponsor: true,
          calls: [{ to: counter, data: toHex(i + 1, { size: 1 }) }],
        }),
      ),
    );
    for (const r of responses)
      expect(r.json).toMatchObject({ activity: { status: 'ACTIVITY_STATUS_COMPLETED' } });
    const statuses = await Promise.all(responses.map((r) => settled(h, statusIdOf(r.json), 60_000)));
    const receipts = await Promise.all(
      statuses.map(async (s) => {
        expect(s).toMatchObject({ txStatus: 'INCLUDED' });
        return chain.getTransactionReceipt({ hash: s.eth?.txHash as Hex });
      }),
    );
    expect(receipts.every((r) => r.status === 'success' && r.from === sponsor)).toBe(true);
    expect(await slot(counter, 0)).toBe(BigInt(fresh));
    expect(await chain.getBalance({ address: fresh })).toBe(0n);
    expect(await nonces(fresh)).toMatchObject({ gasStationNonce: 10n });
    expect(await chain.getCode({ address: fresh })).toBe(`0xef0100${batchExecutorAddress().slice(2)}`);
  });

  it('reports FAILED, not INCLUDED, when the authorization was skipped and the batch never ran', async () => {
    const fresh = await newEthereumKey();
    await rpc('evm_setAutomine', [false]);
    const res = await submitEthSend(h, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION', {
      from: fresh,
      caip2: CAIP2,
      to: counter,
      sponsor: true,
    });
    const id = statusIdOf(res.json);
    await reachedStatus(h, id, 'BROADCASTING', { polls: 200, intervalMs: 25 });
    // The account's nonce moves before inclusion (as if it had sent a transaction of its own): the
    // sponsor's transaction still succeeds, but its authorization no longer applies.
    await rpc('anvil_setNonce', [fresh, toHex(1)]);
    await rpc('evm_mine');
    await rpc('evm_setAutomine', [true]);
    const s = await settled(h, id);
    expect(s.txStatus).toBe('FAILED');
    expect(s.error?.message).toContain('the batch did not run');
    expect((await chain.getTransactionReceipt({ hash: s.eth?.txHash as Hex })).status).toBe('success');
    expect(await chain.getCode({ address: fresh })).toBeUndefined();
    // The next sponsored send authorizes with the moved nonce and runs.
    const again = await submitEthSend(h, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION', {
      from: fresh,
      caip2: CAIP2,
      to: counter,
      sponsor: true,
    });
    expect(await settled(h, statusIdOf(again.json))).toMatchObject({ txStatus: 'INCLUDED' });
    expect(await slot(counter, 0)).toBe(BigInt(fresh));
  });

  it('an unsponsored multi-call batch is sent and paid by the account itself', async () => {
    await rpc('anvil_setBalance', [user, toHex(parseEther('1'))]);
    const sponsorBefore = await chain.getBalance({ address: sponsor });
    const before = await nonces(user);
    const res = await submitEthSend(h, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2', {
      from: user,
      caip2: CAIP2,
      calls: [{ to: counter }, { to: '0x00000000000000000000000000000000000000aa', value: '1000' }],
    });
    const s = await settled(h, statusIdOf(res.json));
    expect(s.txStatus).toBe('INCLUDED');
    const tx = await chain.getTransaction({ hash: s.eth?.txHash as Hex });
    expect(tx.from).toBe(user);
    expect(tx.to).toBe(user);
    expect(BigInt(tx.nonce)).toBe(before.nonce);
    expect(await chain.getBalance({ address: '0x00000000000000000000000000000000000000aa' })).toBe(1000n);
    expect(await chain.getBalance({ address: sponsor })).toBe(sponsorBefore);
    expect(await nonces(user)).toEqual({
      nonce: before.nonce + 1n,
      gasStationNonce: before.gasStationNonce + 1n,
    });
  });

  it('judges every call of a batch by policy: one denied call denies the batch and takes no nonce', async () => {
    const c = h.service.credentials;
    const { userId, key } = await insertUserWithApiKey(h.service.store, {
      organizationId: c.organizationId,
      name: 'batch sender',
    });
    const policy = await post(
      h.baseUrl,
      c,
      '/public/v1/submit/create_policy',
      envelope('ACTIVITY_TYPE_CREATE_POLICY_V3', c.organizationId, {
        policyName: 'batch sender may call the counter, fees unseen when sponsored',
        effect: 'EFFECT_ALLOW',
        consensus: `approvers.any(user, user.id == '${userId}')`,
        condition: `eth.tx.to == '${counter}' && eth.tx.max_fee_per_gas == 0`,
        notes: '',
      }),
    );
    expect(policy.status).toBe(200);
    const asSender = (calls: Record<string, unknown>[]) =>
      submitEthSend(
        h,
        'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2',
        { from: user, caip2: CAIP2, sponsor: true, calls },
        { keys: key },
      );
    const before = await nonces(user);
    const sponsorNonce = await chain.getTransactionCount({ address: sponsor, blockTag: 'pending' });
    const denied = await asSender([{ to: counter }, { to: '0x00000000000000000000000000000000000000bb' }]);
    expect(denied.status).toBe(403);
    expect(await nonces(user)).toEqual(before);
    const ok = await asSender([{ to: counter }, { to: counter }]);
    expect(ok.status).toBe(200);
    const s = await settled(h, statusIdOf(ok.json));
    expect(s.txStatus).toBe('INCLUDED');
    expect((await chain.getTransaction({ hash: s.eth?.txHash as Hex })).nonce).toBe(sponsorNonce);
  });

  const BAD: readonly [string, Record<string, unknown>, string][] = [
    ['a deadline on a single unsponsored call', { deadline: '99999999999' }, 'parameters.deadline'],
    [
      'a gasStationNonce on a single unsponsored call',
      { gasStationNonce: '1' },
      'parameters.gasStationNonce',
    ],
    ['a nonce on a sponsored send', { sponsor: true, nonce: '1' }, 'parameters.nonce'],
    ['a non-decimal deadline', { sponsor: true, deadline: '1e10' }, 'parameters.deadline'],
    ['a negative gasStationNonce', { sponsor: true, gasStationNonce: '-1' }, 'parameters.gasStationNonce'],
    ['a sponsored gas limit below intrinsic', { sponsor: true, gasLimit: '21000' }, 'parameters.gasLimit'],
  ];

  it.each(BAD)('refuses %s, naming the field, with no nonce taken', async (_, override, field) => {
    const before = await nonces(user);
    const res = await submitEthSend(h, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION', {
      from: user,
      caip2: CAIP2,
      to: counter,
      ...override,
    });
    expect(res.status).toBe(400);
    expect(String(res.json.message)).toContain(field);
    expect(await nonces(user)).toEqual(before);
  });

  it('refuses a batch of more than 50 calls, naming parameters.calls', async () => {
    const res = await submitEthSend(h, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2', {
      from: user,
      caip2: CAIP2,
      sponsor: true,
      calls: Array.from({ length: 51 }, () => ({ to: counter })),
    });
    expect(res.status).toBe(400);
    expect(String(res.json.message)).toContain('parameters.calls');
  });
});

/** Every wei the sponsor spent on gas, summed over its mined transactions. */
async function gasPaidBy(address: Hex): Promise<bigint> {
  const latest = await chain.getBlockNumber({ cacheTime: 0 });
  let paid = 0n;
  for (let n = 0n; n <= latest; n++) {
    const block = await chain.getBlock({ blockNumber: n, includeTransactions: true });
    for (const tx of block.transactions) {
      if (tx.from !== address) continue;
      const r = await chain.getTransactionReceipt({ hash: tx.hash });
      paid += r.gasUsed * r.effectiveGasPrice;
    }
  }
  return paid;
}

function revertData(err: unknown): Hex {
  let found: Hex | undefined;
  (err as { walk: (f: (x: unknown) => boolean) => unknown }).walk((x) => {
    const d = (x as { data?: unknown }).data;
    if (typeof d === 'string' && d.startsWith('0x')) found = d as Hex;
    return found !== undefined;
  });
  if (found === undefined) throw new Error('no revert data in the error');
  return found;
}

/** A new secp256k1 private key of the organization, by its Ethereum address. */
async function newEthereumKey(): Promise<Hex> {
  const c = h.service.credentials;
  const res = await post(
    h.baseUrl,
    c,
    '/public/v1/submit/create_private_keys',
    envelope('ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2', c.organizationId, {
      privateKeys: [
        {
          privateKeyName: `sponsored ${randomUUID()}`,
          curve: 'CURVE_SECP256K1',
          addressFormats: ['ADDRESS_FORMAT_ETHEREUM'],
          privateKeyTags: [],
        },
      ],
    }),
  );
  expect(res.status).toBe(200);
  const result = (
    res.json.activity as {
      result: { createPrivateKeysResultV2: { privateKeys: { addresses: { address: string }[] }[] } };
    }
  ).result.createPrivateKeysResultV2;
  return (result.privateKeys[0]?.addresses[0]?.address ?? '').toLowerCase() as Hex;
}
