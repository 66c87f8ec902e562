/**
 * `--metrics-listen`: a listener of its own for Prometheus, so the scrape port can stay on loopback
 * or a pod-internal address while the public API is exposed (or absent, in remote mode). It serves
 * `GET /metrics` and nothing else.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { CountersignError, toRpcStatus } from '../shared/errors.js';

export interface MetricsListener {
  /** `host:port` as bound. */
  readonly address: string;
  close(): Promise<void>;
}

export async function startMetricsListener(o: {
  readonly host: string;
  readonly port: number;
  readonly scrape: () => Promise<string>;
  readonly logger: Logger;
}): Promise<MetricsListener> {
  const log = o.logger.child({ module: 'metrics' });
  const refuse = (res: import('node:http').ServerResponse, status: number, e: CountersignError) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(toRpcStatus(e)));
  };
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics')
      return refuse(
        res,
        404,
        new CountersignError('ROUTE_NOT_FOUND', `${path} is not served here; try /metrics`),
      );
    if (req.method !== 'GET')
      return refuse(
        res,
        405,
        new CountersignError('REQUEST_MALFORMED', `method: /metrics takes GET, not ${req.method}`),
      );
    o.scrape().then(
      (text) => {
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
        res.end(text);
      },
      (e: unknown) => {
        log.error({ err: e }, 'metrics scrape failed');
        refuse(res, 503, new CountersignError('SERVICE_UNAVAILABLE', 'metrics are unavailable'));
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (cause) =>
      reject(
        new CountersignError('CONFIG_INVALID', `metricsListen: cannot listen on ${o.host}:${o.port}`, {
          field: 'metricsListen',
          cause,
        }),
      ),
    );
    server.listen(o.port, o.host, () => resolve());
  });
  const a = server.address() as AddressInfo;
  const address = `${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
  log.info({ address }, 'metrics listening');
  return {
    address,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
