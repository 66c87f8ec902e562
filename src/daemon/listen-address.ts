/**
 * The gRPC listen address and the check that it is safe to expose, without the daemon's modules:
 * `serve` runs it before it starts anything, while the service thread and the daemon still load.
 */
import type { Logger } from 'pino';
import { CountersignError } from '../shared/errors.js';

const isLoopback = (host: string) =>
  host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);

/**
 * Refuses a TCP gRPC address reachable from the network without TLS unless `--grpc-insecure`
 * says so (then warns). Checked before anything listens.
 */
export function assertGrpcListenerSecure(o: {
  readonly listen: string;
  readonly tls: boolean;
  readonly insecure: boolean;
  readonly log: Logger;
}): void {
  if (o.listen.startsWith('unix:') || o.tls) return;
  const { host } = splitHostPort(o.listen);
  if (isLoopback(host)) return;
  if (!o.insecure)
    throw new CountersignError(
      'CONFIG_INVALID',
      `grpcListen: ${o.listen} is reachable from the network and has no TLS; set --grpc-tls-cert and --grpc-tls-key (and --grpc-client-ca for mTLS), or --grpc-insecure to accept the risk`,
      { field: 'grpcListen' },
    );
  o.log.warn(
    { listen: o.listen },
    'gRPC signer listens on a non-loopback address WITHOUT TLS (--grpc-insecure)',
  );
}

/** `host:port` or `[v6]:port`, refused with the field named when it is neither. */
export function splitHostPort(listen: string): { host: string; port: string } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(listen);
  const host = m?.[1] ?? m?.[2];
  const port = m?.[3];
  if (host === undefined || port === undefined || Number(port) > 65535) {
    throw new CountersignError('CONFIG_INVALID', `grpcListen: ${JSON.stringify(listen)} is not host:port`, {
      field: 'grpcListen',
    });
  }
  return { host, port };
}
