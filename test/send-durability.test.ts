/**
 * kill -9 during a burst of eth_send_transaction, restart, and every acknowledged send is included
 * exactly once (issue 5). The real CLI (`countersign init`, then `serve` as a child process) sends to
 * a real anvil through a relay (test/helpers/rpc-relay.ts) that decides, per signed transaction,
 * whether the node gets it; anvil mines only when told. When the process is killed, the sends it
 * recorded are in every state a crash can leave them in:
 * - mined (the first transactions, each followed by a block);
 * - in the node's pool, not mined (recorded BROADCASTING);
 * - in the node's pool, but the service died before learning so (recorded INITIALIZED);
 * - never seen by the node (acknowledged, not broadcast);
 * - recorded but never acknowledged (answers the client lost, or the kill came between the commit
 *   and the answer), and sent but not recorded (in flight at the kill).
 * After the restart, clients at once resend what they got no answer to and send anew while the node
 * still lacks the held-back transactions, so only the allocator's own record knows their nonces are
 * taken. Every send must end INCLUDED with the bytes it was first signed with, every recipient must
 * hold its value exactly once, and the sender's nonces must have no gap and no twin.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { getAddress, keccak256, parseTransaction, toHex, type Hex } from 'viem';
import type { Credentials } from '../src/service/embedded.js';
import { startAnvil, type RunningAnvil } from './helpers/anvil.js';
import { envelope, post, type RawResponse } from './helpers/http.js';
import { startRpcRelay, type BroadcastFate, type RpcRelay } from './helpers/rpc-relay.js';
import { startServe, type ServeProcess } from './helpers/serve.js';

const BIN = fileURLToPath(new URL('../bin/countersign.js', import.meta.url));
const CAIP2 = 'eip155:31337';
const SEND_TYPE = 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2';
const SEND_PATH = '/public/v1/submit/eth_send_transaction';
const RESULT_KEY = 'ethSendTransactionResultV2';

/** Requests in the burst, one every STAGGER_MS (so requests overlap and the kill lands mid-burst). */
const N = 60;
const STAGGER_MS = 10;
/** Transactions 1..MINED (in order of first broadcast) reach the node, each followed by a block. */
const MINED = 6;
/** Transactions up to POOLED reach the node and stay in its pool (anvil mines only when told). */
const POOLED = 10;
/** Transactions up to LOST reach the node, but the service never learns the node's answer. */
const LOST = 14;
/** Later transactions never reach the node. The kill comes after this many acknowledgements. */
const KILL_AFTER_ACKS = 30;
/** Every LOSE_ANSWER_EVERY-th request's answer never reaches the client. */
const LOSE_ANSWER_EVERY = 12;

let anvil: RunningAnvil | undefined;
let relay: RpcRelay | undefined;
const dirs: string[] = [];
const servers: ServeProcess[] = [];
afterAll(async () => {
  // Only after a failure is one still running.
  for (const s of servers) if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill('SIGKILL');
  await relay?.close();
  await anvil?.stop();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

interface Request {
  readonly to: Hex;
  readonly value: bigint;
  readonly body: string;
  /** How the service names the request body (`activity.fingerprint`). */
  readonly fingerprint: string;
  /** The client never sees the answer (as if the connection dropped): recorded, unacknowledged. */
  readonly answerLost: boolean;
  sent?: true;
  /** The answer, if the service sent one before it died and the client saw it. */
  ack?: { activityId: string; statusId: string };
}

interface SendStatus {
  txStatus: string;
  eth?: { txHash: Hex };
  error?: { message: string };
}

interface ActivityJson {
  id: string;
  type: string;
  status: string;
  fingerprint: string;
  result: Record<string, { sendTransactionStatusId?: string }>;
}

interface MinedTx {
  hash: Hex;
  from: Hex;
  to: Hex;
  nonce: Hex;
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

function statusIdOf(a: ActivityJson): string {
  const id = a.result[RESULT_KEY]?.sendTransactionStatusId;
  expect(id).toBeTypeOf('string');
  return id as string;
}

/** The public API of one running service, as a client with the root credentials sees it. */
function apiOf(baseUrl: string, creds: Credentials) {
  const query = async (path: string, body: Record<string, unknown>) => {
    const res = await post(
      baseUrl,
      creds,
      `/public/v1/query/${path}`,
      JSON.stringify({ organizationId: creds.organizationId, ...body }),
    );
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json;
  };
  return {
    /** Submits a send body; the answer must be a completed activity. */
    async send(body: string): Promise<ActivityJson> {
      const res = await post(baseUrl, creds, SEND_PATH, body);
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      const a = res.json.activity as ActivityJson;
      expect(a.status).toBe('ACTIVITY_STATUS_COMPLETED');
      return a;
    },
    /** Polls in rounds, one query at a time (a loaded machine stays free), until all are terminal. */
    async settled(statusIds: readonly string[]): Promise<Map<string, SendStatus>> {
      const done = new Map<string, SendStatus>();
      const deadline = Date.now() + 45_000;
      for (;;) {
        for (const id of statusIds.filter((i) => !done.has(i))) {
          const s = (await query('get_send_transaction_status', {
            sendTransactionStatusId: id,
          })) as unknown as SendStatus;
          if (s.txStatus === 'INCLUDED' || s.txStatus === 'FAILED') done.set(id, s);
          else if (Date.now() > deadline) throw new Error(`send ${id} still ${s.txStatus}`);
        }
        if (done.size === statusIds.length) return done;
        await sleep(250);
      }
    },
    /** Every send activity of the organization, by the fingerprint of its request body. */
    async sendActivities(): Promise<Map<string, ActivityJson>> {
      const out = new Map<string, ActivityJson>();
      for (let before = ''; ;) {
        const page = (await query('list_activities', {
          paginationOptions: { limit: '100', ...(before === '' ? {} : { before }) },
        })) as { activities: ActivityJson[] };
        for (const a of page.activities) if (a.type === SEND_TYPE) out.set(a.fingerprint, a);
        if (page.activities.length < 100) return out;
        before = (page.activities[page.activities.length - 1] as ActivityJson).id;
      }
    },
  };
}

/** The transactions `from` sent in blocks after `afterBlock`. */
async function minedFrom(rpcUrl: string, from: Hex, afterBlock: bigint): Promise<MinedTx[]> {
  const latest = BigInt(await rpc<Hex>(rpcUrl, 'eth_blockNumber'));
  const out: MinedTx[] = [];
  for (let b = afterBlock + 1n; b <= latest; b++) {
    const block = await rpc<{ transactions: MinedTx[] }>(rpcUrl, 'eth_getBlockByNumber', [toHex(b), true]);
    out.push(...block.transactions.filter((t) => t.from.toLowerCase() === from.toLowerCase()));
  }
  return out;
}

describe('eth_send_transaction durability', () => {
  it('kill -9 mid-burst: after a restart every acknowledged send is included exactly once, nonces gapless', async () => {
    const chain = await startAnvil();
    anvil = chain;
    const nonceOf = async (a: Hex) =>
      BigInt(await rpc<Hex>(chain.rpcUrl, 'eth_getTransactionCount', [a, 'latest']));
    const balanceOf = async (a: Hex) => BigInt(await rpc<Hex>(chain.rpcUrl, 'eth_getBalance', [a, 'latest']));

    const dataDir = mkdtempSync(join(tmpdir(), 'countersign-send-durable-'));
    dirs.push(dataDir);
    const init = await promisify(execFile)(process.execPath, [BIN, 'init', '--data-dir', dataDir]);
    const { accounts } = JSON.parse(init.stdout.trim()) as {
      accounts: { addressFormat: string; address: string }[];
    };
    const creds = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as Credentials;
    const from = accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')?.address as Hex;
    expect(from).toMatch(/^0x[0-9a-fA-F]{40}$/);
    await rpc(chain.rpcUrl, 'anvil_setBalance', [from, toHex(10n ** 21n)]);
    const startNonce = await nonceOf(from);
    const startBlock = BigInt(await rpc<Hex>(chain.rpcUrl, 'eth_blockNumber'));
    // Blocks only when this test mines one, so broadcast sends wait in the pool.
    await rpc(chain.rpcUrl, 'evm_setAutomine', [false]);

    // Transactions in order of first broadcast: mined, pooled, lost (the node has it, the service
    // never learns so), held (the node never gets it).
    const lost: Hex[] = [];
    const held: Hex[] = [];
    const minedAfter = new Set<Hex>();
    let onFirstBroadcast = () => {};
    const fateBeforeKill = (raw: Hex, nth: number): BroadcastFate => {
      onFirstBroadcast();
      if (nth <= POOLED) return 'forward';
      if (nth <= LOST) {
        lost.push(raw);
        return 'forward-then-lose';
      }
      held.push(raw);
      return 'hold';
    };
    relay = await startRpcRelay({
      target: chain.rpcUrl,
      decide: fateBeforeKill,
      afterForward: async (raw, nth) => {
        if (nth > MINED || minedAfter.has(raw)) return;
        minedAfter.add(raw);
        await rpc(chain.rpcUrl, 'evm_mine');
      },
    });
    const serveArgs = ['--data-dir', dataDir, '--chain-rpc', `${CAIP2}=${relay.url}`];

    const first = await startServe(serveArgs);
    servers.push(first);
    expect(first.ready.organizationId).toBe(creds.organizationId);
    const api1 = first.ready.api as string;

    const requests: Request[] = Array.from({ length: N }, (_, i) => {
      const to = getAddress(toHex(randomBytes(20)));
      const value = BigInt(i + 1) * 1_000_003n;
      const body = envelope(SEND_TYPE, creds.organizationId, {
        from,
        caip2: CAIP2,
        calls: [{ to, value: value.toString() }],
      });
      return {
        to,
        value,
        body,
        fingerprint: `sha256:${createHash('sha256').update(body).digest('hex')}`,
        answerLost: i % LOSE_ANSWER_EVERY === LOSE_ANSWER_EVERY / 2,
      };
    });

    // The burst: requests overlap; the kill comes once KILL_AFTER_ACKS are acknowledged and the
    // relay has held at least one transaction back (so every crash state above exists).
    let acks = 0;
    const answeredUnseen: Request[] = [];
    let killed = false;
    const kill = () => {
      if (killed || acks < KILL_AFTER_ACKS || relay === undefined || relay.seen() <= LOST) return;
      killed = true;
      first.proc.kill('SIGKILL');
    };
    onFirstBroadcast = () => queueMicrotask(kill);
    const inFlight: Promise<void>[] = [];
    for (const r of requests) {
      if (killed) break;
      r.sent = true;
      inFlight.push(
        post(api1, creds, SEND_PATH, r.body).then(
          (res: RawResponse) => {
            // An answer, even one read after the kill, was sent before it: an acknowledgement.
            expect(res.status, JSON.stringify(res.json)).toBe(200);
            const a = res.json.activity as ActivityJson;
            expect(a.status).toBe('ACTIVITY_STATUS_COMPLETED');
            if (r.answerLost) {
              answeredUnseen.push(r);
              return;
            }
            r.ack = { activityId: a.id, statusId: statusIdOf(a) };
            acks++;
            kill();
          },
          (e: unknown) => {
            // No answer: the connection died with the process. Before the kill that is a failure.
            if (!killed) throw e;
          },
        ),
      );
      await sleep(STAGGER_MS);
    }
    await Promise.all(inFlight);
    expect(killed).toBe(true);
    expect(await first.exited).toBe('SIGKILL');

    const acked = requests.filter((r) => r.ack !== undefined);
    const unacked = requests.filter((r) => r.ack === undefined);
    expect(acked.length).toBeGreaterThanOrEqual(KILL_AFTER_ACKS);
    expect(unacked.length).toBeGreaterThan(0);
    expect(answeredUnseen.length).toBeGreaterThan(0);

    // What the node had when the service died: MINED transactions mined, the rest of the first LOST
    // in its pool, the others never sent to it.
    await relay.idle();
    const forwardedBeforeKill = relay.forwarded.length;
    const nodeHadAtKill = new Set(relay.forwarded.map((raw) => keccak256(raw)));
    expect(nodeHadAtKill.size).toBe(LOST);
    expect(held.length).toBeGreaterThan(0);
    const minedAtKill = (await nonceOf(from)) - startNonce;
    expect(minedAtKill).toBeGreaterThan(0n);
    const receiptsAtKill = await Promise.all(
      [...nodeHadAtKill].map((hash) => rpc<unknown>(chain.rpcUrl, 'eth_getTransactionReceipt', [hash])),
    );
    const pooledAtKill = receiptsAtKill.filter((r) => r === null).length;
    expect(pooledAtKill).toBeGreaterThan(0);
    // One block while the service is down: pooled and lost sends with no nonce gap before them are
    // mined (a lost one's broadcast after the restart meets "nonce too low"), the rest stay pooled.
    await rpc(chain.rpcUrl, 'evm_mine');

    // After the restart the node stays unreachable for the held-back transactions until the clients
    // below have sent again: until then only the service's record knows those nonces are taken.
    const heldBack = new Set(held);
    relay.setDecide((raw) => (heldBack.has(raw) ? 'refuse' : 'forward'));
    const second = await startServe(serveArgs);
    servers.push(second);
    try {
      await rpc(chain.rpcUrl, 'evm_setIntervalMining', [1]);
      const api = apiOf(second.ready.api as string, creds);
      const newSend = (to: Hex, value: bigint) =>
        envelope(SEND_TYPE, creds.organizationId, {
          from,
          caip2: CAIP2,
          calls: [{ to, value: value.toString() }],
        });

      // The restarted service holds every acknowledged send, as acknowledged, and every answer the
      // client lost.
      const recorded = await api.sendActivities();
      for (const r of acked) {
        const a = recorded.get(r.fingerprint);
        expect(a?.id).toBe(r.ack?.activityId);
        expect(a && statusIdOf(a)).toBe(r.ack?.statusId);
      }
      for (const r of answeredUnseen) expect(recorded.has(r.fingerprint)).toBe(true);
      const recordedRequests = requests.filter((r) => recorded.has(r.fingerprint));

      // Right away, clients send again what they never got an answer to, and one sends something
      // new. A recorded request is answered with its activity (not sent again); an unrecorded one
      // and the new one take nonces after every recorded send, none of which the node has yet.
      const early = getAddress(toHex(randomBytes(20)));
      const [earlyActivity, ...retried] = await Promise.all([
        api.send(newSend(early, 4141n)),
        ...unacked.map(async (r) => {
          const a = await api.send(r.body);
          const known = recorded.get(r.fingerprint);
          if (known !== undefined) expect(a.id).toBe(known.id);
          return a;
        }),
      ]);
      relay.setDecide(() => 'forward');

      // Every send ends INCLUDED; each recipient got its value exactly once.
      const statusIdFor = new Map<Hex, string>([[early, statusIdOf(earlyActivity as ActivityJson)]]);
      for (const r of acked) statusIdFor.set(r.to, r.ack?.statusId as string);
      unacked.forEach((r, i) => statusIdFor.set(r.to, statusIdOf(retried[i] as ActivityJson)));
      const statuses = await api.settled([...statusIdFor.values()]);
      const hashOf = new Map<Hex, Hex>();
      for (const [to, id] of statusIdFor) {
        const s = statuses.get(id);
        expect(s?.error).toBeUndefined();
        expect(s?.txStatus).toBe('INCLUDED');
        hashOf.set(to, s?.eth?.txHash as Hex);
      }
      for (const r of requests) expect(await balanceOf(r.to)).toBe(r.value);
      expect(await balanceOf(early)).toBe(4141n);
      // Acknowledged sends the node had never seen at the kill are among them.
      expect(acked.filter((r) => !nodeHadAtKill.has(hashOf.get(r.to) as Hex)).length).toBeGreaterThan(0);

      // A new send after all of them takes the next nonce: the allocator carried on from its record.
      const fresh = getAddress(toHex(randomBytes(20)));
      const freshId = statusIdOf(await api.send(newSend(fresh, 4242n)));
      const freshStatus = (await api.settled([freshId])).get(freshId);
      expect(freshStatus?.txStatus).toBe('INCLUDED');
      hashOf.set(fresh, freshStatus?.eth?.txHash as Hex);
      expect(await balanceOf(fresh)).toBe(4242n);
      const freshTx = await rpc<MinedTx>(chain.rpcUrl, 'eth_getTransactionByHash', [
        freshStatus?.eth?.txHash,
      ]);
      expect(BigInt(freshTx.nonce)).toBe(startNonce + BigInt(N + 1));

      // On chain: the sender's nonce counts exactly the distinct sends; their nonces run from the
      // start with no gap and no twin; one transaction per recipient, the one the service reported.
      const total = N + 2; // the burst, the early send and the fresh one
      expect(await nonceOf(from)).toBe(startNonce + BigInt(total));
      const mined = await minedFrom(chain.rpcUrl, from, startBlock);
      expect(mined.map((t) => BigInt(t.nonce)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(
        Array.from({ length: total }, (_, i) => startNonce + BigInt(i)),
      );
      expect(new Set(mined.map((t) => getAddress(t.to))).size).toBe(total);
      for (const t of mined) expect(t.hash).toBe(hashOf.get(getAddress(t.to)));

      // Everything the node was ever sent: one signed transaction per nonce and per recipient, so
      // every rebroadcast (after the restart too) carried the bytes first signed.
      const byNonce = new Map<number, Set<Hex>>();
      const byRecipient = new Map<string, Set<Hex>>();
      for (const raw of relay.forwarded) {
        const tx = parseTransaction(raw);
        const hash = keccak256(raw);
        byNonce.set(tx.nonce as number, (byNonce.get(tx.nonce as number) ?? new Set()).add(hash));
        const to = getAddress(tx.to as Hex);
        byRecipient.set(to, (byRecipient.get(to) ?? new Set()).add(hash));
      }
      for (const hashes of byNonce.values()) expect(hashes.size).toBe(1);
      for (const hashes of byRecipient.values()) expect(hashes.size).toBe(1);
      // Sends the node had without the service knowing, and sends it never got before the crash,
      // were broadcast after the restart with their stored bytes.
      const afterKill = relay.forwarded.slice(forwardedBeforeKill);
      for (const raw of [...lost, ...held]) expect(afterKill).toContain(raw);

      // For the run log: how the kill split the burst.
      const sent = requests.filter((r) => r.sent).length;
      const recordedUnacked = recordedRequests.length - acked.length;
      console.info(
        `send-durability: ${sent} sent, ${acked.length} acknowledged, ${recordedUnacked} recorded but ` +
          `unacknowledged (${answeredUnseen.length} answers lost), ${sent - acked.length - recordedUnacked} ` +
          `unrecorded; at the kill the node had ${nodeHadAtKill.size} (${minedAtKill} mined, ` +
          `${pooledAtKill} pooled), ${held.length} held back`,
      );
    } finally {
      second.proc.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    }
  }, 120_000);
});
