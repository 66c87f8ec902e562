/**
 * Starts the embedded service on a worker thread, exposes it as a request handler, and supervises
 * it: if the thread dies, every request it held is answered at once with SERVICE_UNAVAILABLE (a
 * retry with the same body is safe: fingerprints make it idempotent), the death is logged at fatal,
 * and a new thread is started on the same data dir. After `maxRestarts` failed starts in a row the
 * host gives up and calls `onFatal` (the CLI exits non-zero so an orchestrator restarts the process).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { MetricFamilies } from '../observability/metrics.js';
import { CountersignError, toRpcStatus } from '../shared/errors.js';
import type { RequestHandler, TransportResponse } from '../shared/request-handler.js';
import type { DaemonSignerCredentials } from './daemonSigner.js';
import type { Credentials } from './embedded.js';
import type { HostMessage, ServiceWorkerData, WorkerMessage } from './worker-protocol.js';

export interface ServiceWorker {
  readonly handler: RequestHandler;
  readonly credentials: Credentials;
  /** The gRPC daemon's non-root identity. */
  readonly daemonSigner: DaemonSignerCredentials;
  /** The gas station's sponsor address (fund it to send sponsored batches). */
  readonly sponsorAddress: string;
  /** Whether the public API serves this POST path (the service thread's list, sent when ready). */
  routeExists(path: string): boolean;
  /** The thread's hand-written Prometheus text and its prom-client families (to aggregate). */
  metrics(): Promise<{ readonly text: string; readonly families: MetricFamilies }>;
  /** True when a round trip through the service thread and its store answers within the deadline. */
  probe(deadlineMs?: number): Promise<boolean>;
  /** Lets in-flight requests finish, closes the store, stops the thread. */
  close(): Promise<void>;
}

export interface SupervisionOptions {
  readonly logger?: Logger;
  /** Called once when the service cannot be brought back; the process should exit non-zero. */
  readonly onFatal?: (err: Error) => void;
  /** Failed starts in a row before giving up (default 5). */
  readonly maxRestarts?: number;
  /** How long close() lets the thread exit by itself once its service has closed (default 5 s). */
  readonly exitGraceMs?: number;
  /** Test seam: sees each thread as it starts (a test terminates one to prove the supervision). */
  readonly onSpawn?: (worker: Worker) => void;
}

// Compiled (the image): worker.js sits beside this file and runs as it is. From the sources: the
// worker needs tsx's loader registered too, and tsx is resolved from this package, not from the
// working directory (an eval'd worker resolves bare names against the cwd).
const COMPILED = import.meta.url.endsWith('.js');
const WORKER_URL = new URL(COMPILED ? './worker.js' : './worker.ts', import.meta.url);

function tsxApiUrl(): string {
  if (typeof import.meta.resolve === 'function') return import.meta.resolve('tsx/esm/api');
  // Under a test runner without import.meta.resolve: the ESM entry its package.json exports.
  const pkgJson = createRequire(import.meta.url).resolve('tsx/package.json');
  const pkg = JSON.parse(readFileSync(pkgJson, 'utf8')) as {
    exports: { './esm/api': { import: { default: string } } };
  };
  return pathToFileURL(join(dirname(pkgJson), pkg.exports['./esm/api'].import.default)).href;
}

function newWorker(data: ServiceWorkerData): Worker {
  if (COMPILED) return new Worker(WORKER_URL, { workerData: data });
  const bootstrap = `import(${JSON.stringify(tsxApiUrl())}).then((m) => { m.register(); return import(${JSON.stringify(WORKER_URL.href)}); });`;
  return new Worker(bootstrap, { eval: true, workerData: data });
}

type Pending = (m: WorkerMessage | undefined) => void;

interface Thread {
  readonly worker: Worker;
  readonly pending: Map<number, Pending>;
}

const unavailableBody = (message: string): Uint8Array =>
  Buffer.from(JSON.stringify(toRpcStatus(new CountersignError('SERVICE_UNAVAILABLE', message))));

/** Starts one service thread and resolves when it is ready (or rejects with why it could not start). */
function spawnThread(
  data: ServiceWorkerData,
  onSpawn: ((w: Worker) => void) | undefined,
): Promise<{ thread: Thread; ready: Extract<WorkerMessage, { kind: 'ready' }> }> {
  const worker = newWorker(data);
  onSpawn?.(worker);
  const thread: Thread = { worker, pending: new Map() };
  return new Promise((resolve, reject) => {
    const early = (e: Error) =>
      reject(new CountersignError('INTERNAL', `service worker failed: ${e.message}`, { cause: e }));
    const earlyExit = (code: number) =>
      reject(new CountersignError('INTERNAL', `service worker exited with code ${code} before it was ready`));
    worker.once('error', early);
    worker.once('exit', earlyExit);
    worker.on('message', (m: WorkerMessage) => {
      switch (m.kind) {
        case 'ready':
          worker.off('error', early);
          worker.off('exit', earlyExit);
          resolve({ thread, ready: m });
          return;
        case 'failed':
          reject(new CountersignError('CONFIG_INVALID', m.message));
          void worker.terminate();
          return;
        case 'response':
        case 'metrics':
        case 'pong': {
          const cb = thread.pending.get(m.id);
          thread.pending.delete(m.id);
          cb?.(m);
          return;
        }
        case 'closed':
          return;
      }
    });
  });
}

export async function startServiceWorker(
  data: ServiceWorkerData,
  supervision: SupervisionOptions = {},
): Promise<ServiceWorker> {
  const log = supervision.logger?.child({ module: 'service-supervisor' });
  const maxRestarts = supervision.maxRestarts ?? 5;
  const exitGraceMs = supervision.exitGraceMs ?? 5_000;
  const first = await spawnThread(data, supervision.onSpawn);
  let current: Thread | undefined = first.thread;
  let closing = false;
  let nextId = 1;

  /** Answers everything the dead thread held, then brings up a new one. */
  function supervise(thread: Thread): void {
    const died = (reason: string) => {
      if (closing || current !== thread) return;
      current = undefined;
      log?.fatal({ reason, pending: thread.pending.size }, 'service worker died; restarting it');
      for (const cb of thread.pending.values()) cb(undefined);
      thread.pending.clear();
      void restart(0);
    };
    thread.worker.on('error', (e) => died(`error: ${e.message}`));
    thread.worker.on('exit', (code) => died(`exit code ${code}`));
  }

  async function restart(attempt: number): Promise<void> {
    if (closing) return;
    try {
      const { thread } = await spawnThread(data, supervision.onSpawn);
      if (closing) {
        await thread.worker.terminate();
        return;
      }
      current = thread;
      supervise(thread);
      log?.warn({ attempt: attempt + 1 }, 'service worker restarted');
    } catch (e) {
      if (attempt + 1 >= maxRestarts) {
        log?.fatal({ err: e, attempts: attempt + 1 }, 'service worker cannot be restarted; giving up');
        supervision.onFatal?.(e instanceof Error ? e : new Error(String(e)));
        return;
      }
      await new Promise((r) => setTimeout(r, Math.min(5_000, 250 * 2 ** attempt)));
      await restart(attempt + 1);
    }
  }
  supervise(first.thread);

  /** Sends one message to the live thread; undefined when there is none or it died meanwhile. */
  function call(
    m: HostMessage & { id: number },
    transfer: ArrayBuffer[] = [],
  ): Promise<WorkerMessage | undefined> {
    const thread = current;
    if (thread === undefined) return Promise.resolve(undefined);
    return new Promise((done) => {
      thread.pending.set(m.id, done);
      thread.worker.postMessage(m, transfer);
    });
  }

  const routes: ReadonlySet<string> = new Set(first.ready.routes);
  return {
    routeExists: (path) => routes.has(path),
    credentials: first.ready.credentials,
    daemonSigner: first.ready.daemonSigner,
    sponsorAddress: first.ready.sponsorAddress,
    handler: async (req): Promise<TransportResponse> => {
      // A copy owns its ArrayBuffer (Buffer#slice would share, and transferring would detach, a pool).
      const body = new Uint8Array(req.body);
      const id = nextId++;
      const r = await call({ kind: 'request', id, path: req.path, headers: req.headers, body }, [
        body.buffer as ArrayBuffer,
      ]);
      if (r?.kind === 'response') return { status: r.status, body: r.body };
      return {
        status: 503,
        body: unavailableBody('the service is restarting; retry the same request'),
      };
    },
    metrics: async () => {
      const r = await call({ kind: 'metrics', id: nextId++ });
      return r?.kind === 'metrics' ? { text: r.text, families: r.families } : { text: '', families: [] };
    },
    probe: async (deadlineMs = 2_000) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), deadlineMs)));
      const r = await Promise.race([call({ kind: 'ping', id: nextId++ }), timeout]);
      clearTimeout(timer);
      return r?.kind === 'pong' && r.ok;
    },
    close: async () => {
      closing = true;
      const thread = current;
      if (thread === undefined) return;
      while (thread.pending.size > 0) await new Promise((r) => setTimeout(r, 10));
      const exited = new Promise<void>((done) => thread.worker.once('exit', () => done()));
      await new Promise<void>((done) => {
        thread.worker.on('message', (m: WorkerMessage) => {
          if (m.kind === 'closed') done();
        });
        void exited.then(done);
        thread.worker.postMessage({ kind: 'close' } satisfies HostMessage);
      });
      // With its service closed, nothing keeps the thread's loop alive and it exits by itself.
      // Terminating it at once could land inside a native addon's call (secp256k1, keccak are
      // node-addon-api addons), which aborts the whole process: only a thread that outstays the
      // grace is terminated.
      let timer: NodeJS.Timeout | undefined;
      const outstayed = await Promise.race([
        exited.then(() => false),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(true), exitGraceMs))),
      ]);
      clearTimeout(timer);
      if (outstayed) {
        log?.warn({ graceMs: exitGraceMs }, 'service worker did not exit after closing; terminating it');
        await thread.worker.terminate();
      }
    },
  };
}
