/**
 * P-256 stamp checks in batches on a thread of their own.
 *
 * A request thread with other requests in hand hands its P-256 checks to another thread, so it goes
 * on with them while a core that has time verifies. libuv's pool does that one check at a time:
 * every check queues a job and wakes a pool thread, and on a virtual machine waking a sleeping
 * thread costs the waker about as much as half the check itself. This verifier instead collects
 * the checks asked for in one turn of the event loop and posts them to its thread as one message:
 * one wake-up each way per batch, whatever its size. The check is node:crypto's, with the same key
 * and DER signature as the inline check (`verifyApiKeyStamp`).
 *
 * If the thread fails or exits, the checks it held and every later one run on libuv's pool.
 */
import { verify as nodeVerify } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { P256_SPKI_COMPRESSED, p256Key } from '../keys/apiPublicKeys.js';

// The thread's program: for each check, the key (compressed point, hex; the caller has already
// checked it is a point), the body (the bytes up to its end in one buffer, from the previous
// body's end), the DER signature (hex).
const PROGRAM = `
const { parentPort, workerData } = require('node:worker_threads');
const { createPublicKey, verify } = require('node:crypto');
const SPKI = Buffer.from(workerData.spki);
const keys = new Map();
const keyOf = (hex) => {
  let k = keys.get(hex);
  if (k === undefined) {
    if (keys.size >= 10000) keys.clear();
    k = { key: createPublicKey({ key: Buffer.concat([SPKI, Buffer.from(hex, 'hex')]), format: 'der', type: 'spki' }), dsaEncoding: 'der' };
    keys.set(hex, k);
  }
  return k;
};
parentPort.on('message', (m) => {
  const bodies = Buffer.from(m.bodies);
  const ok = new Uint8Array(m.keys.length);
  for (let i = 0; i < m.keys.length; i++) {
    try {
      const body = bodies.subarray(i === 0 ? 0 : m.ends[i - 1], m.ends[i]);
      ok[i] = verify('sha256', body, keyOf(m.keys[i]), Buffer.from(m.signatures[i], 'hex')) ? 1 : 0;
    } catch {
      ok[i] = 0;
    }
  }
  parentPort.postMessage({ id: m.id, ok }, [ok.buffer]);
});
`;

interface Check {
  readonly publicKey: string;
  readonly body: Uint8Array;
  readonly signature: string;
  readonly resolve: (ok: boolean) => void;
}

interface Reply {
  readonly id: number;
  readonly ok: Uint8Array;
}

/** One check on libuv's pool (the fallback once the thread is gone). */
function onPool(c: Check): void {
  const key = p256Key(c.publicKey);
  if (key === undefined) return c.resolve(false);
  try {
    nodeVerify('sha256', c.body, { key, dsaEncoding: 'der' }, Buffer.from(c.signature, 'hex'), (err, valid) =>
      c.resolve(err === null && valid),
    );
  } catch {
    c.resolve(false);
  }
}

export class P256Verifier {
  readonly #logger: Logger | undefined;
  #worker: Worker | undefined;
  /** Checks asked for since the last batch was posted. */
  #queued: Check[] = [];
  #scheduled = false;
  /** Posted batches not yet answered, by id. */
  readonly #posted = new Map<number, Check[]>();
  #nextId = 0;
  /** The thread failed or exited (or the verifier was closed): checks go to the pool. */
  #gone = false;
  #batches = 0;
  #checks = 0;

  /** `logger` is told if the thread stops before the verifier is closed. */
  constructor(logger?: Logger) {
    this.#logger = logger;
  }

  /** Batches posted to the thread and the checks they held, since the verifier was made. */
  get stats(): { batches: number; checks: number } {
    return { batches: this.#batches, checks: this.#checks };
  }

  /** Resolves whether `signature` (DER, hex) is `publicKey`'s (compressed P-256, hex) over `body`. */
  verify(publicKey: string, body: Uint8Array, signature: string): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const check: Check = { publicKey, body, signature, resolve };
      if (this.#gone) return onPool(check);
      this.#queued.push(check);
      // An idle thread takes a check at once; while a batch is out, checks gather until the next
      // turn of the loop.
      if (this.#posted.size === 0) this.#post();
      else if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => {
          this.#scheduled = false;
          this.#post();
        });
      }
    });
  }

  /** Ends the thread; checks still held finish on the pool. */
  async close(): Promise<void> {
    const worker = this.#worker;
    this.#giveUp();
    if (worker !== undefined) await worker.terminate();
  }

  #post(): void {
    const checks = this.#queued;
    this.#queued = [];
    if (checks.length === 0) return;
    if (this.#gone) {
      for (const c of checks) onPool(c);
      return;
    }
    let total = 0;
    for (const c of checks) total += c.body.length;
    // One fresh buffer for the bodies, transferred: a view's whole backing store would be copied.
    const bodies = new Uint8Array(total);
    const ends = new Uint32Array(checks.length);
    const keys: string[] = new Array<string>(checks.length);
    const signatures: string[] = new Array<string>(checks.length);
    let at = 0;
    for (let i = 0; i < checks.length; i++) {
      const c = checks[i] as Check;
      bodies.set(c.body, at);
      at += c.body.length;
      ends[i] = at;
      keys[i] = c.publicKey;
      signatures[i] = c.signature;
    }
    this.#batches++;
    this.#checks += checks.length;
    const id = this.#nextId++;
    this.#posted.set(id, checks);
    const worker = this.#thread();
    worker.ref();
    worker.postMessage({ id, bodies: bodies.buffer, ends, keys, signatures }, [bodies.buffer, ends.buffer]);
  }

  #thread(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const worker = new Worker(PROGRAM, { eval: true, workerData: { spki: P256_SPKI_COMPRESSED } });
    // Held only while a batch is out, so an idle verifier never keeps a process alive.
    worker.unref();
    worker.on('message', (m: Reply) => {
      const checks = this.#posted.get(m.id);
      if (checks === undefined) return;
      this.#posted.delete(m.id);
      if (this.#posted.size === 0) worker.unref();
      for (let i = 0; i < checks.length; i++) (checks[i] as Check).resolve(m.ok[i] === 1);
    });
    const stopped = (err?: Error) => {
      if (this.#gone) return;
      this.#logger?.warn({ err }, 'stamp verifier thread stopped; stamp checks go to the thread pool');
      this.#giveUp();
    };
    worker.on('error', stopped);
    worker.on('exit', () => stopped());
    this.#worker = worker;
    return worker;
  }

  /** From now on every check runs on the pool, the ones the thread held included. */
  #giveUp(): void {
    if (this.#gone) return;
    this.#gone = true;
    this.#worker = undefined;
    const held = [...this.#posted.values()].flat();
    this.#posted.clear();
    for (const c of held) onPool(c);
  }
}
