/**
 * Several replicas on one PostgreSQL database: three real `countersign serve --store postgres://…`
 * processes with one master key, started at once on an empty database (which they initialize
 * once), driven over HTTP. Every guarantee the single process gives holds across them, enforced by
 * the database: one activity and one signature per body, consecutive nonces for concurrent sends,
 * a consensus that completes once, and after `kill -9` of one replica the other two answer, read
 * every acknowledged activity, include every acknowledged send once and take over its claims.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { getAddress, keccak256, recoverAddress, toHex, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../src/service/embedded.js';
import { openPostgresStore } from '../src/service/store/postgres.js';
import { startAnvil, type RunningAnvil } from './helpers/anvil.js';
import { envelope, post, type RawResponse } from './helpers/http.js';
import { createTestDatabase, type TestDatabase } from './helpers/pgdb.js';
import { startServe, type ServeProcess } from './helpers/serve.js';
import { insertUserWithApiKey } from './helpers/users.js';
import type { ApiKeyPair } from './helpers/api-key.js';

const BIN = fileURLToPath(new URL('../bin/countersign.js', import.meta.url));
const CAIP2 = 'eip155:31337';
const SIGN_TYPE = 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2';
const SIGN_PATH = '/public/v1/submit/sign_raw_payload';
const SEND_TYPE = 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2';
const SEND_PATH = '/public/v1/submit/eth_send_transaction';
const SEND_RESULT = 'ethSendTransactionResultV2';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface ActivityJson {
  id: string;
  type: string;
  status: string;
  fingerprint: string;
  result?: Record<string, Record<string, unknown>>;
}

interface Replica {
  readonly serve: ServeProcess;
  readonly api: string;
  /** The name its leases and claims carry (from its `replica started` log line). */
  readonly replicaId: string;
}

let db: TestDatabase;
let anvil: RunningAnvil;
let sql: pg.Client;
let creds: Credentials;
let from: Hex;
const replicas: Replica[] = [];
const dirs: string[] = [];
const masterKey = randomBytes(32).toString('hex');

async function rpc<T>(method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(anvil.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const json = (await res.json()) as { result?: T; error?: { message: string } };
  if (json.error !== undefined) throw new Error(`${method}: ${json.error.message}`);
  return json.result as T;
}

function replicaIdOf(s: ServeProcess): string {
  for (const line of s.stderr().split('\n')) {
    if (!line.includes('replica started')) continue;
    return (JSON.parse(line) as { replicaId: string }).replicaId;
  }
  throw new Error('no replica started line');
}

async function startReplica(dataDir: string): Promise<Replica> {
  const serve = await startServe(
    ['--store', db.url, '--data-dir', dataDir, '--chain-rpc', `${CAIP2}=${anvil.rpcUrl}`],
    { COUNTERSIGN_MASTER_KEY: masterKey },
  );
  return { serve, api: serve.ready.api as string, replicaId: replicaIdOf(serve) };
}

async function query(r: Replica, path: string, body: Record<string, unknown>): Promise<RawResponse> {
  return post(
    r.api,
    creds,
    `/public/v1/query/${path}`,
    JSON.stringify({ organizationId: creds.organizationId, ...body }),
  );
}

async function activityAt(r: Replica, activityId: string): Promise<ActivityJson> {
  const res = await query(r, 'get_activity', { activityId });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json.activity as ActivityJson;
}

function sendBody(i: number, tag: string): string {
  const to = getAddress(toHex(createHash('sha256').update(`${tag} ${i}`).digest().subarray(0, 20)));
  return envelope(SEND_TYPE, creds.organizationId, {
    from,
    caip2: CAIP2,
    calls: [{ to, value: String(1_000 + i) }],
  });
}

function signBody(payload: string): string {
  return envelope(SIGN_TYPE, creds.organizationId, {
    signWith: from,
    payload: keccak256(toHex(payload)),
    encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
    hashFunction: 'HASH_FUNCTION_NO_OP',
  });
}

/** Polls get_send_transaction_status at `r` until every id is INCLUDED or FAILED. */
async function settle(r: Replica, ids: readonly string[]): Promise<Map<string, string>> {
  const done = new Map<string, string>();
  const deadline = Date.now() + 60_000;
  for (;;) {
    for (const id of ids.filter((i) => !done.has(i))) {
      const res = await query(r, 'get_send_transaction_status', { sendTransactionStatusId: id });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      const status = res.json.txStatus as string;
      if (status === 'INCLUDED' || status === 'FAILED') done.set(id, status);
      else if (Date.now() > deadline) throw new Error(`send ${id} still ${status}`);
    }
    if (done.size === ids.length) return done;
    await sleep(250);
  }
}

/** The nonces of `from`'s transactions mined since block `after`. */
async function minedNonces(after: bigint): Promise<bigint[]> {
  const latest = BigInt(await rpc<Hex>('eth_blockNumber'));
  const out: bigint[] = [];
  for (let b = after + 1n; b <= latest; b++) {
    const block = await rpc<{ transactions: { from: string; nonce: Hex }[] }>('eth_getBlockByNumber', [
      toHex(b),
      true,
    ]);
    for (const t of block.transactions)
      if (t.from.toLowerCase() === from.toLowerCase()) out.push(BigInt(t.nonce));
  }
  return out.sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
}

const consecutive = (start: bigint, n: number) => Array.from({ length: n }, (_, i) => start + BigInt(i));

beforeAll(async () => {
  db = await createTestDatabase('cs_replicas');
  anvil = await startAnvil();
  sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  // Three data dirs, one database, one master key: started at once on the empty database, they
  // initialize it once; the first to finish writes the credentials the others then need.
  const base = mkdtempSync(join(tmpdir(), 'cs-replicas-'));
  dirs.push(base);
  const dataDirs = [0, 1, 2].map((i) => join(base, `r${i}`));
  dataDirs.forEach((d) => mkdirSync(d, { mode: 0o700 }));
  const init = await Promise.allSettled(
    dataDirs.map((d) =>
      promisify(execFile)(process.execPath, [BIN, 'init', '--store', db.url, '--data-dir', d], {
        env: { ...process.env, COUNTERSIGN_MASTER_KEY: masterKey },
      }),
    ),
  );
  const ok = init.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
  // The ones that lost the race are told the store is initialized and where to copy the credentials.
  for (const r of init) if (r.status === 'rejected') expect(String(r.reason)).toMatch(/already initialized/);
  expect(ok).toHaveLength(1);
  const owner = dataDirs[ok[0] as number] as string;
  for (const d of dataDirs)
    if (d !== owner)
      for (const f of ['credentials.json', 'daemon-signer.json']) copyFileSync(join(owner, f), join(d, f));
  creds = JSON.parse(readFileSync(join(owner, 'credentials.json'), 'utf8')) as Credentials;
  from = getAddress(
    creds.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')?.address as string,
  );
  await rpc('anvil_setBalance', [from, toHex(10n ** 21n)]);
  replicas.push(...(await Promise.all(dataDirs.map(startReplica))));
  const orgs = await sql.query('SELECT id FROM organizations WHERE parent_id IS NULL');
  expect(orgs.rows.map((r) => r.id)).toEqual([creds.organizationId]);
}, 180_000); // three inits, then three replicas started at once (each given 90 s by startServe)

afterAll(async () => {
  for (const r of replicas)
    if (r.serve.proc.exitCode === null && r.serve.proc.signalCode === null) {
      r.serve.proc.kill('SIGTERM');
      await r.serve.exited;
    }
  await sql?.end();
  await anvil?.stop();
  await db?.drop();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
}, 60_000);

describe('three replicas on one PostgreSQL database', () => {
  it('200 identical bodies spread over the three at once: one activity, one signature', async () => {
    const body = signBody(`identical ${Date.now()}`);
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => post((replicas[i % 3] as Replica).api, creds, SIGN_PATH, body)),
    );
    for (const a of answers) expect(a.status, JSON.stringify(a.json)).toBe(200);
    const activities = answers.map((a) => a.json.activity as ActivityJson);
    expect(new Set(activities.map((a) => a.id)).size).toBe(1);
    expect(new Set(activities.map((a) => a.status))).toEqual(new Set(['ACTIVITY_STATUS_COMPLETED']));
    const results = activities.map((a) => JSON.stringify(a.result));
    expect(new Set(results).size).toBe(1);
    const id = (activities[0] as ActivityJson).id;
    const fp = (activities[0] as ActivityJson).fingerprint;
    const rows = await sql.query('SELECT id, status FROM activities WHERE fingerprint = $1', [fp]);
    expect(rows.rows).toEqual([{ id, status: 'ACTIVITY_STATUS_COMPLETED' }]);
    // Signed once: one replica ran it (the others answered with its activity).
    const runs = replicas
      .flatMap((r) => r.serve.stderr().split('\n'))
      .filter((l) => l.includes('activity completed') && l.includes(id));
    expect(runs).toHaveLength(1);
    // The signature verifies against the wallet account.
    const sig = (activities[0] as ActivityJson).result?.signRawPayloadResult as {
      r: string;
      s: string;
      v: string;
    };
    const payload = JSON.parse(body).parameters.payload as Hex;
    const recovered = await recoverAddress({
      hash: payload,
      signature: { r: `0x${sig.r}`, s: `0x${sig.s}`, yParity: Number.parseInt(sig.v, 16) },
    });
    expect(recovered).toBe(from);
  }, 60_000);

  it('300 concurrent eth_send_transaction over the three: all included, nonces consecutive', async () => {
    const startNonce = BigInt(await rpc<Hex>('eth_getTransactionCount', [from, 'latest']));
    const startBlock = BigInt(await rpc<Hex>('eth_blockNumber'));
    const answers = await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        post((replicas[i % 3] as Replica).api, creds, SEND_PATH, sendBody(i, 'burst')),
      ),
    );
    for (const a of answers) expect(a.status, JSON.stringify(a.json)).toBe(200);
    const ids = answers.map(
      (a) => (a.json.activity as ActivityJson).result?.[SEND_RESULT]?.sendTransactionStatusId as string,
    );
    expect(new Set(ids).size).toBe(300);
    const settled = await settle(replicas[1] as Replica, ids);
    expect([...settled.values()].every((s) => s === 'INCLUDED')).toBe(true);
    expect(await minedNonces(startBlock)).toEqual(consecutive(startNonce, 300));
    const stored = await sql.query(
      `SELECT nonce FROM send_transactions WHERE from_address = $1 AND status = 'INCLUDED'`,
      [from.toLowerCase()],
    );
    expect(new Set(stored.rows.map((r) => r.nonce)).size).toBe(stored.rows.length);
  }, 120_000);

  it('a 2-of-3 consensus whose approvals arrive at different replicas completes once', async () => {
    const store = await openPostgresStore(db.url, { maxConnections: 2 });
    const users: Record<string, { userId: string; key: ApiKeyPair }> = {};
    try {
      for (const name of ['dave', 'alice', 'bob', 'carol'])
        users[name] = await insertUserWithApiKey(store, { organizationId: creds.organizationId, name });
    } finally {
      await store.close();
    }
    const approvers = ['alice', 'bob', 'carol'].map((n) => `'${users[n]?.userId}'`).join(', ');
    const payloadTag = `consensus ${Date.now()}`;
    const policy = await post(
      (replicas[0] as Replica).api,
      creds,
      '/public/v1/submit/create_policy',
      envelope('ACTIVITY_TYPE_CREATE_POLICY_V3', creds.organizationId, {
        policyName: 'two of three for raw payloads',
        effect: 'EFFECT_ALLOW',
        condition: `activity.type == '${SIGN_TYPE}'`,
        consensus: `approvers.filter(u, u.id in [${approvers}]).count() >= 2`,
        notes: '',
      }),
    );
    expect(policy.status, JSON.stringify(policy.json)).toBe(200);
    const as = (name: string) => ({ keys: users[name]?.key as ApiKeyPair });
    // dave (not an approver) submits; alice, bob and carol approve at once, each at another replica.
    const submitted = await post(
      (replicas[0] as Replica).api,
      creds,
      SIGN_PATH,
      signBody(payloadTag),
      as('dave'),
    );
    expect(submitted.status, JSON.stringify(submitted.json)).toBe(200);
    const pending = submitted.json.activity as ActivityJson;
    expect(pending.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    const votes = await Promise.all(
      ['alice', 'bob', 'carol'].map((name, i) =>
        post(
          (replicas[i] as Replica).api,
          creds,
          '/public/v1/submit/approve_activity',
          envelope('ACTIVITY_TYPE_APPROVE_ACTIVITY', creds.organizationId, {
            fingerprint: pending.fingerprint,
          }),
          as(name),
        ),
      ),
    );
    const completedBy = votes.filter(
      (v) => v.status === 200 && (v.json.activity as ActivityJson).status === 'ACTIVITY_STATUS_COMPLETED',
    );
    expect(completedBy.length, JSON.stringify(votes.map((v) => v.json))).toBeGreaterThanOrEqual(1);
    const refused = votes.filter((v) => v.status !== 200);
    for (const v of refused) expect(JSON.stringify(v.json)).toContain('parameters.fingerprint');
    // Two approvals counted (one of them completed it; an answer may already show the completion);
    // the third found it decided and is refused.
    expect(refused).toHaveLength(1);
    expect(votes.filter((v) => v.status === 200)).toHaveLength(2);
    const stored = await sql.query(
      'SELECT status, result_json, updated_at_ms FROM activities WHERE id = $1',
      [pending.id],
    );
    expect(stored.rows[0]?.status).toBe('ACTIVITY_STATUS_COMPLETED');
    // Two approvals and the submission: three votes, one each; one evaluation allowed it (it ran once).
    const voteRows = await sql.query('SELECT user_id FROM votes WHERE activity_id = $1', [pending.id]);
    expect(voteRows.rows).toHaveLength(3);
    const allowed = await sql.query(
      "SELECT id FROM policy_evaluations WHERE activity_id = $1 AND outcome = 'OUTCOME_ALLOW'",
      [pending.id],
    );
    expect(allowed.rows).toHaveLength(1);
    const read = await Promise.all(replicas.map((r) => activityAt(r, pending.id)));
    expect(new Set(read.map((a) => JSON.stringify(a.result))).size).toBe(1);
  }, 60_000);

  it('kill -9 of one replica mid burst: the others answer, read every acknowledged activity, include every acknowledged send once and take over its claims', async () => {
    const [a, b, victim] = replicas as [Replica, Replica, Replica];
    const testStart = Date.now();
    const startNonce = BigInt(await rpc<Hex>('eth_getTransactionCount', [from, 'latest']));
    const startBlock = BigInt(await rpc<Hex>('eth_blockNumber'));
    // Sends wait in the node's pool, so the victim still holds claims on them when it dies.
    await rpc('evm_setAutomine', [false]);
    const N = 90;
    const acked: { activityId: string; statusId?: string }[] = [];
    let killed = false;
    let killing = false;
    // The sends the victim held claims on when it died (its tracker claims them in its rounds).
    let claimedAtKill: string[] = [];
    // Once 30 calls were answered, kill the victim as soon as its tracker holds a claim, so there
    // is something for the others to take over; the burst goes on until it is dead.
    const kill = () => {
      if (killing || acked.length < 30) return;
      killing = true;
      void (async () => {
        const until = Date.now() + 30_000;
        while (Date.now() < until) {
          const held = await sql.query(
            `SELECT id FROM send_transactions WHERE claimed_by = $1 AND status IN ('INITIALIZED', 'BROADCASTING')`,
            [victim.replicaId],
          );
          if (held.rows.length > 0) {
            claimedAtKill = held.rows.map((r) => r.id as string);
            break;
          }
          await sleep(20);
        }
        killed = true;
        victim.serve.proc.kill('SIGKILL');
      })();
    };
    const inFlight: Promise<void>[] = [];
    for (let i = 0; i < N || (!killed && i < 2_000); i++) {
      const r = replicas[i % 3] as Replica;
      const send = i % 2 === 0;
      const body = send ? sendBody(i, 'kill') : signBody(`kill ${i} ${Date.now()}`);
      inFlight.push(
        post(r.api, creds, send ? SEND_PATH : SIGN_PATH, body).then(
          (res) => {
            expect(res.status, JSON.stringify(res.json)).toBe(200);
            const act = res.json.activity as ActivityJson;
            expect(act.status).toBe('ACTIVITY_STATUS_COMPLETED');
            const statusId = act.result?.[SEND_RESULT]?.sendTransactionStatusId as string | undefined;
            acked.push({ activityId: act.id, ...(statusId === undefined ? {} : { statusId }) });
            kill();
          },
          (e: unknown) => {
            // No answer: only the victim's connections may die, and only once it was killed.
            if (!(killed && r === victim)) throw e;
          },
        ),
      );
      await sleep(5);
    }
    await Promise.all(inFlight);
    expect(killed).toBe(true);
    expect(await victim.serve.exited).toBe('SIGKILL');
    expect(claimedAtKill.length).toBeGreaterThan(0);
    await rpc('evm_setIntervalMining', [1]);

    // The other two keep answering.
    for (const r of [a, b]) {
      const res = await post(r.api, creds, SIGN_PATH, signBody(`after kill ${r.api} ${Date.now()}`));
      expect(res.status, JSON.stringify(res.json)).toBe(200);
    }
    // Every acknowledged activity reads the same from both.
    for (const ack of acked) {
      const [x, y] = await Promise.all([activityAt(a, ack.activityId), activityAt(b, ack.activityId)]);
      expect(x.status).toBe('ACTIVITY_STATUS_COMPLETED');
      expect(JSON.stringify(x)).toBe(JSON.stringify(y));
    }
    // Every acknowledged send included exactly once, the victim's claims taken over.
    const sendIds = acked.flatMap((x) => (x.statusId === undefined ? [] : [x.statusId]));
    const settled = await settle(a, sendIds);
    expect([...settled.values()].every((s) => s === 'INCLUDED')).toBe(true);
    const taken = await sql.query(
      `SELECT id, status, claimed_by FROM send_transactions WHERE id = ANY($1::text[])`,
      [claimedAtKill],
    );
    for (const row of taken.rows) {
      expect(row.status).toBe('INCLUDED');
      expect([a.replicaId, b.replicaId]).toContain(row.claimed_by);
    }
    // Every send the database recorded (acknowledged or not) ends included, mined once, no gap.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const open = await sql.query(
        `SELECT count(*)::int AS n FROM send_transactions WHERE status IN ('INITIALIZED', 'BROADCASTING')`,
      );
      if (open.rows[0]?.n === 0) break;
      if (Date.now() > deadline) throw new Error(`${String(open.rows[0]?.n)} sends still open`);
      await sleep(250);
    }
    const recorded = await sql.query(
      `SELECT status FROM send_transactions WHERE from_address = $1 AND created_at_ms >= $2`,
      [from.toLowerCase(), testStart],
    );
    expect(new Set(recorded.rows.map((r) => r.status))).toEqual(new Set(['INCLUDED']));
    const mined = await minedNonces(startBlock);
    expect(mined).toEqual(consecutive(startNonce, recorded.rows.length));
    expect(mined.length).toBeGreaterThanOrEqual(sendIds.length);
  }, 120_000);
});
