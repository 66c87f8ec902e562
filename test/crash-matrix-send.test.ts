/**
 * The crash matrix of a send (issue 16): `serve` killed with SIGKILL at each failpoint of the send
 * path, restarted on the same data dir, and the same body retried. A recording relay
 * (test/helpers/rpc-relay.ts) between countersign and a real anvil shows what the node was sent:
 * - `after-broadcast-before-record`: the node has the transaction (in its pool, anvil not mining),
 *   the service died before recording the broadcast;
 * - `in-tracker-round`: the transaction is mined and the tracker has seen its receipt, the service
 *   died before recording the inclusion.
 * Either way: one activity for the request (the acknowledged one, if an answer got out), one signed
 * transaction (a re-broadcast carries the same bytes), one transaction in anvil's pool and then on
 * chain, and the send ends INCLUDED with that transaction's hash.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { getAddress, keccak256, toHex, type Hex } from 'viem';
import type { Credentials } from '../src/service/embedded.js';
import { startAnvil, type RunningAnvil } from './helpers/anvil.js';
import { envelope, post } from './helpers/http.js';
import { startRpcRelay, type RpcRelay } from './helpers/rpc-relay.js';
import { startServe, type ServeProcess } from './helpers/serve.js';

const BIN = fileURLToPath(new URL('../bin/countersign.js', import.meta.url));
const CAIP2 = 'eip155:31337';
const SEND_TYPE = 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2';
const SEND_PATH = '/public/v1/submit/eth_send_transaction';
const RESULT_KEY = 'ethSendTransactionResultV2';

let anvil: RunningAnvil | undefined;
let relay: RpcRelay | undefined;
const dirs: string[] = [];
const servers: ServeProcess[] = [];
afterAll(async () => {
  for (const s of servers) if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill('SIGKILL');
  await relay?.close();
  await anvil?.stop();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

interface ActivityJson {
  id: string;
  type: string;
  status: string;
  fingerprint: string;
  result: Record<string, { sendTransactionStatusId?: string }>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function rpc<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const json = (await res.json()) as { result?: T; error?: { message: string } };
  if (json.error !== undefined) throw new Error(`${method}: ${json.error.message}`);
  return json.result as T;
}

const CASES = [
  { failpoint: 'after-broadcast-before-record', automine: false },
  { failpoint: 'in-tracker-round', automine: true },
] as const;

describe('crash matrix of a send', () => {
  it('leaves one transaction in the pool and on chain per request after SIGKILL at each send failpoint', async () => {
    const chain = await startAnvil();
    anvil = chain;
    relay = await startRpcRelay({ target: chain.rpcUrl });
    const recorder = relay;
    const dataDir = mkdtempSync(join(tmpdir(), 'countersign-crash-send-'));
    dirs.push(dataDir);
    const init = await promisify(execFile)(process.execPath, [BIN, 'init', '--data-dir', dataDir]);
    const { accounts } = JSON.parse(init.stdout.trim()) as {
      accounts: { addressFormat: string; address: string }[];
    };
    const creds = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as Credentials;
    const from = accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')?.address as Hex;
    await rpc(chain.rpcUrl, 'anvil_setBalance', [from, toHex(10n ** 21n)]);
    const nonceOf = async () =>
      BigInt(await rpc<Hex>(chain.rpcUrl, 'eth_getTransactionCount', [from, 'latest']));
    const pooled = async () => {
      const s = await rpc<{ pending: Hex; queued: Hex }>(chain.rpcUrl, 'txpool_status');
      return Number(BigInt(s.pending) + BigInt(s.queued));
    };
    const serveArgs = ['--data-dir', dataDir, '--chain-rpc', `${CAIP2}=${recorder.url}`];
    const serve = async (env: NodeJS.ProcessEnv = {}) => {
      const p = await startServe(serveArgs, env);
      servers.push(p);
      return p;
    };
    const query = async (api: string, path: string, body: Record<string, unknown>) => {
      const res = await post(
        api,
        creds,
        `/public/v1/query/${path}`,
        JSON.stringify({ organizationId: creds.organizationId, ...body }),
      );
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      return res.json;
    };
    const sendActivities = async (api: string, fingerprint: string) =>
      (
        (await query(api, 'list_activities', { paginationOptions: { limit: '100' } })) as {
          activities: ActivityJson[];
        }
      ).activities.filter((a) => a.type === SEND_TYPE && a.fingerprint === fingerprint);
    const statusIdOf = (a: ActivityJson) => a.result[RESULT_KEY]?.sendTransactionStatusId as string;

    for (const { failpoint, automine } of CASES) {
      await rpc(chain.rpcUrl, 'evm_setAutomine', [automine]);
      const nonceBefore = await nonceOf();
      const forwardedBefore = recorder.forwarded.length;
      const to = getAddress(toHex(randomBytes(20)));
      const body = envelope(SEND_TYPE, creds.organizationId, {
        from,
        caip2: CAIP2,
        calls: [{ to, value: '1000003' }],
      });
      const fingerprint = `sha256:${createHash('sha256').update(body).digest('hex')}`;

      // The crash: whether the answer got out before the kill is the process's race; an answer
      // that did is an acknowledgement the restarted service must keep.
      const first = await serve({ COUNTERSIGN_FAILPOINT: failpoint });
      let ack: ActivityJson | undefined;
      await post(first.ready.api as string, creds, SEND_PATH, body).then(
        (res) => {
          expect(res.status, JSON.stringify(res.json)).toBe(200);
          ack = res.json.activity as ActivityJson;
        },
        () => undefined,
      );
      expect(await first.exited, failpoint).toBe('SIGKILL');

      // The broadcast happened before the kill: the node holds exactly this one transaction.
      await recorder.idle();
      const sent = new Set(recorder.forwarded.slice(forwardedBefore));
      expect(sent.size, failpoint).toBe(1);
      const raw = [...sent][0] as Hex;
      const hash = keccak256(raw);
      if (automine) {
        expect(await nonceOf()).toBe(nonceBefore + 1n);
        expect(await rpc(chain.rpcUrl, 'eth_getTransactionReceipt', [hash])).not.toBeNull();
      } else {
        expect(await pooled()).toBe(1);
        expect(await nonceOf()).toBe(nonceBefore);
      }

      // Restart on the same data, retry the same body: the same activity, nothing signed again.
      const second = await serve();
      const api = second.ready.api as string;
      const recorded = await sendActivities(api, fingerprint);
      expect(recorded.length, failpoint).toBe(1);
      if (ack !== undefined) expect(recorded[0]?.id).toBe(ack.id);
      const retry = await post(api, creds, SEND_PATH, body);
      expect(retry.status, JSON.stringify(retry.json)).toBe(200);
      const activity = retry.json.activity as ActivityJson;
      expect(activity.id).toBe(recorded[0]?.id);
      const statusId = statusIdOf(activity);
      expect(statusId).toBeTypeOf('string');

      // The pool still holds one transaction (a re-broadcast of the same bytes is no second one).
      if (!automine) {
        // The restarted tracker finds the send unrecorded as broadcast and sends the same bytes again.
        for (const deadline = Date.now() + 30_000; recorder.forwarded.length < forwardedBefore + 2;) {
          expect(Date.now(), 'the restarted tracker re-broadcasts').toBeLessThan(deadline);
          await sleep(100);
        }
        expect(recorder.forwarded.slice(forwardedBefore)).toEqual([raw, raw]);
        expect(await pooled()).toBe(1);
        await rpc(chain.rpcUrl, 'evm_mine');
      }
      let status: { txStatus: string; eth?: { txHash: Hex } } | undefined;
      for (const deadline = Date.now() + 30_000; ;) {
        status = (await query(api, 'get_send_transaction_status', { sendTransactionStatusId: statusId })) as {
          txStatus: string;
          eth?: { txHash: Hex };
        };
        if (status.txStatus === 'INCLUDED' || status.txStatus === 'FAILED' || Date.now() > deadline) break;
        await sleep(250);
      }
      expect(status?.txStatus, failpoint).toBe('INCLUDED');
      expect(status?.eth?.txHash).toBe(hash);

      // On chain: exactly one transaction from the sender, the recorded one, paying once.
      expect(await nonceOf()).toBe(nonceBefore + 1n);
      expect(await pooled()).toBe(0);
      expect(BigInt(await rpc<Hex>(chain.rpcUrl, 'eth_getBalance', [to, 'latest']))).toBe(1000003n);
      expect(new Set(recorder.forwarded.slice(forwardedBefore))).toEqual(new Set([raw]));
      // The same body once more: the same activity, still one transaction.
      const again = await post(api, creds, SEND_PATH, body);
      expect((again.json.activity as ActivityJson).id).toBe(activity.id);
      await sleep(600);
      expect(await nonceOf()).toBe(nonceBefore + 1n);
      expect(await sendActivities(api, fingerprint)).toHaveLength(1);

      second.proc.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    }
  }, 180_000);
});
