/** Starts the embedded service on a worker thread and exposes it as a request handler. */
import { Worker } from 'node:worker_threads';
import { CountersignError } from '../shared/errors.js';
import type { RequestHandler, TransportResponse } from '../client/transport.js';
import type { Credentials } from './embedded.js';
import type { HostMessage, ServiceWorkerData, WorkerMessage } from './worker-protocol.js';

export interface ServiceWorker {
  readonly handler: RequestHandler;
  readonly credentials: Credentials;
  /** The gas station's sponsor address (fund it to send sponsored batches). */
  readonly sponsorAddress: string;
  metrics(): Promise<string>;
  /** Lets in-flight requests finish, closes the store, stops the thread. */
  close(): Promise<void>;
}

const WORKER_URL = new URL('./worker.ts', import.meta.url).href;
// The sources are TypeScript run through tsx's loader; a worker needs the loader registered too.
const BOOTSTRAP = `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(WORKER_URL)}); });`;

export function startServiceWorker(data: ServiceWorkerData): Promise<ServiceWorker> {
  const worker = new Worker(BOOTSTRAP, { eval: true, workerData: data });
  let nextId = 1;
  const pending = new Map<number, (m: WorkerMessage) => void>();
  let onClosed: (() => void) | undefined;
  const send = (m: HostMessage, transfer: ArrayBuffer[] = []) => worker.postMessage(m, transfer);

  return new Promise((resolve, reject) => {
    worker.once('error', (e) =>
      reject(new CountersignError('INTERNAL', `service worker failed: ${e.message}`, { cause: e })),
    );
    worker.on('message', (m: WorkerMessage) => {
      switch (m.kind) {
        case 'ready':
          resolve({
            credentials: m.credentials,
            sponsorAddress: m.sponsorAddress,
            handler: (req) =>
              new Promise<TransportResponse>((done) => {
                const id = nextId++;
                pending.set(id, (r) => {
                  if (r.kind === 'response') done({ status: r.status, body: r.body });
                });
                // A copy owns its ArrayBuffer (Buffer#slice would share, and transferring would detach, a pool).
                const body = new Uint8Array(req.body);
                send({ kind: 'request', id, path: req.path, headers: req.headers, body }, [
                  body.buffer as ArrayBuffer,
                ]);
              }),
            metrics: () =>
              new Promise<string>((done) => {
                const id = nextId++;
                pending.set(id, (r) => done(r.kind === 'metrics' ? r.text : ''));
                send({ kind: 'metrics', id });
              }),
            close: async () => {
              while (pending.size > 0) await new Promise((r) => setTimeout(r, 10));
              await new Promise<void>((done) => {
                onClosed = done;
                send({ kind: 'close' });
              });
              await worker.terminate();
            },
          });
          return;
        case 'failed':
          reject(new CountersignError('CONFIG_INVALID', m.message));
          return;
        case 'response':
        case 'metrics': {
          const cb = pending.get(m.id);
          pending.delete(m.id);
          cb?.(m);
          return;
        }
        case 'closed':
          onClosed?.();
          return;
      }
    });
  });
}
