/**
 * The embedded service on its own thread: `countersign serve` runs it here so that signing, stamp
 * checks and SQLite commits (fsync included) use the second core and never stall the gRPC loop.
 * Messages carry the same stamped bytes the in-process transport would pass; nothing else.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createLogger } from '../logger.js';
import { openEmbeddedService } from './embedded.js';
import { servedRoutes } from './api/routes.js';
import { lingerPoint, stallPoint } from '../observability/failpoints.js';
import { metricsJson, serviceMetrics, setServiceName } from '../observability/metrics.js';
import { startTracing } from '../observability/tracing.js';
import type { HostMessage, ServiceWorkerData, WorkerMessage } from './worker-protocol.js';

const port = parentPort;
if (port === null) throw new Error('src/service/worker.ts must run in a worker thread');
const data = workerData as ServiceWorkerData;
const logger = createLogger(data.logLevel);
if (data.serviceName !== undefined) setServiceName(data.serviceName);
serviceMetrics(); // every service family shows from the first scrape
// Spans of this thread (public-API request, stamp check, policy, sign, store write, broadcast).
const tracing =
  data.otlpEndpoint === undefined
    ? undefined
    : await startTracing({ endpoint: data.otlpEndpoint, serviceName: data.serviceName ?? 'countersign' });
const post = (m: WorkerMessage, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);

try {
  const service = await openEmbeddedService({
    dataDir: data.dataDir,
    store: data.store,
    logger: logger.child({ module: 'service' }),
    masterKeyEnv: data.masterKeyEnv,
    maxRequestAgeMs: data.maxRequestAgeMs,
    maxClockSkewMs: data.maxClockSkewMs,
    chainRpc: new Map(data.chainRpc),
    allowPrivateNetwork: data.allowPrivateNetwork ?? false,
    ...(data.webhookMaxAgeMs === undefined ? {} : { webhooks: { maxAgeMs: data.webhookMaxAgeMs } }),
    ...(data.consoleOrigin === undefined ? {} : { consoleOrigin: data.consoleOrigin }), // --- console ---
    daemonSigner: true,
    ...(data.delivery === undefined ? {} : { delivery: data.delivery }), // --- auth proxy ---
    ...(data.authProxyListen === undefined ? {} : { authProxyListen: data.authProxyListen }), // --- auth proxy ---
  });
  port.on('message', (m: HostMessage) => {
    switch (m.kind) {
      case 'request':
        service.handler({ path: m.path, headers: m.headers, body: m.body }).then(
          (res) => {
            // A copy owns its ArrayBuffer, so transferring it cannot detach a Buffer pool.
            const body = new Uint8Array(res.body);
            post({ kind: 'response', id: m.id, status: res.status, body }, [body.buffer as ArrayBuffer]);
          },
          (e: unknown) => {
            // The handler answers every request itself; this is the last guard against a hang.
            logger.error({ err: e }, 'request handler failed');
            const body = new TextEncoder().encode(
              '{"code":13,"message":"internal server error","details":[]}',
            );
            post({ kind: 'response', id: m.id, status: 500, body }, [body.buffer as ArrayBuffer]);
          },
        );
        return;
      case 'metrics':
        void metricsJson().then((families) =>
          post({ kind: 'metrics', id: m.id, text: service.metrics.render(), families }),
        );
        return;
      case 'ping':
        // A real round trip: this thread answers only after its store did.
        stallPoint('stall-store'); // --- operability --- (tests only: see failpoints.ts)
        service.store.getOrganization(service.credentials.organizationId).then(
          (org) => post({ kind: 'pong', id: m.id, ok: org !== undefined }),
          (e: unknown) => {
            logger.error({ err: e }, 'readiness probe: the store did not answer');
            post({ kind: 'pong', id: m.id, ok: false });
          },
        );
        return;
      case 'close':
        void service
          .close()
          .then(() => tracing?.shutdown())
          .then((flushed) => {
            if (flushed === false) logger.warn('tracing: the collector did not take the last spans');
            post({ kind: 'closed' });
            port.close();
            lingerPoint('linger-after-close'); // --- operability --- (tests only: see failpoints.ts)
          });
        return;
    }
  });
  if (service.daemonSigner === undefined) throw new Error('the daemon signer was not created');
  post({
    kind: 'ready',
    credentials: service.credentials,
    daemonSigner: service.daemonSigner,
    sponsorAddress: service.sponsorAddress,
    routes: servedRoutes(),
  });
} catch (e) {
  post({ kind: 'failed', message: e instanceof Error ? e.message : String(e) });
}
