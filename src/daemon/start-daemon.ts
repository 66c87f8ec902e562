/**
 * The gRPC daemon: `countersign.v1.Signer`, `grpc.health.v1.Health` and server reflection on one
 * listener. The public-API client is a dependency, so the same daemon runs embedded, against a
 * remote API, or in tests against a transport that tampers with answers.
 */
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation } from 'grpc-health-check';
import type { Logger } from 'pino';
import type { PublicApiClient } from '../client/client.js';
import { CountersignError } from '../shared/errors.js';
import type { CallContext, DaemonContext } from './context.js';
import { ExpectedSignerResolver } from './expected-signer.js';
import { evaluatePolicies } from './evaluate-policies.js';
import { getActivity } from './get-activity.js';
import { toServiceError } from './grpc-status.js';
import { IdempotencyStore } from './idempotency.js';
import type { WatchCallContext } from './polling.js';
import { loadSignerProto } from './proto.js';
import { sendEthTransaction } from './send-eth-transaction.js';
import { signMessage } from './sign-message.js';
import { signRawPayloads } from './sign-raw-payloads.js';
import { signTransaction } from './sign-transaction.js';
import { watchActivity } from './watch-activity.js';
import { watchSendTransaction } from './watch-send-transaction.js';

export interface StartDaemonOptions {
  /** `host:port`; port 0 binds an ephemeral port. */
  readonly listen: string;
  readonly client: PublicApiClient;
  readonly defaultOrganizationId: string;
  readonly idempotencyDbPath: string;
  readonly logger: Logger;
  /** How long close() waits for clients to hang up before cutting their sessions (default 5 s). */
  readonly drainTimeoutMs?: number;
}

export interface RunningDaemon {
  /** The bound `host:port`. */
  readonly address: string;
  /** Stops taking calls, lets in-flight calls finish, then closes the store. */
  close(): Promise<void>;
}

const SIGNER_SERVICE = 'countersign.v1.Signer';

/** Starts the gRPC daemon and resolves once it is listening. */
export async function startDaemon(opts: StartDaemonOptions): Promise<RunningDaemon> {
  const { host } = splitHostPort(opts.listen);
  const log = opts.logger.child({ module: 'daemon' });
  const proto = loadSignerProto();
  const idempotency = new IdempotencyStore(opts.idempotencyDbPath);
  const ctx: DaemonContext = {
    client: opts.client,
    defaultOrganizationId: opts.defaultOrganizationId,
    idempotency,
    signers: new ExpectedSignerResolver(opts.client),
  };

  let closing: Promise<void> | undefined;
  let inFlight = 0;
  let drained: (() => void) | undefined;
  function unary<Req, Res>(
    method: string,
    handler: (ctx: DaemonContext, call: CallContext, req: Req) => Promise<Res>,
  ): grpc.handleUnaryCall<Req, Res> {
    return (call, callback) => {
      const callLog = log.child({ rpc: method, requestId: randomUUID() });
      inFlight++;
      handler(ctx, { log: callLog }, call.request)
        .then(
          (res) => callback(null, res),
          (err: unknown) => callback(toServiceError(err, callLog)),
        )
        .finally(() => {
          inFlight--;
          if (inFlight === 0) drained?.();
        });
    };
  }

  // Open watch streams: close() ends them (they would otherwise poll until a terminal state, and
  // the drain would wait for them).
  const streams = new Set<AbortController>();
  const SHUTDOWN = 'daemon shutting down';
  function watch<Req, Res>(
    method: string,
    handler: (ctx: DaemonContext, call: WatchCallContext, req: Req, send: (m: Res) => void) => Promise<void>,
  ): grpc.handleServerStreamingCall<Req, Res> {
    return (call) => {
      const callLog = log.child({ rpc: method, requestId: randomUUID() });
      const abort = new AbortController();
      if (closing !== undefined) abort.abort(SHUTDOWN);
      streams.add(abort);
      // Client cancel and deadline both arrive as 'cancelled'; the stream is gone, stop polling.
      call.on('cancelled', () => abort.abort('cancelled'));
      handler(ctx, { log: callLog, signal: abort.signal }, call.request, (m) => call.write(m))
        .then(
          () => {
            if (call.cancelled) return;
            if (abort.signal.reason === SHUTDOWN) {
              call.emit(
                'error',
                toServiceError(
                  new CountersignError('DAEMON_SHUTTING_DOWN', 'the daemon is shutting down'),
                  callLog,
                ),
              );
            } else call.end();
          },
          (err: unknown) => {
            if (!call.cancelled) call.emit('error', toServiceError(err, callLog));
          },
        )
        .finally(() => streams.delete(abort));
    };
  }

  const server = new grpc.Server();
  server.addService(proto.signerService, {
    SignTransaction: unary('SignTransaction', signTransaction),
    SignRawPayloads: unary('SignRawPayloads', signRawPayloads),
    SignMessage: unary('SignMessage', signMessage),
    GetActivity: unary('GetActivity', getActivity),
    WatchActivity: watch('WatchActivity', watchActivity),
    EvaluatePolicies: unary('EvaluatePolicies', evaluatePolicies),
    SendEthTransaction: unary('SendEthTransaction', sendEthTransaction),
    WatchSendTransaction: watch('WatchSendTransaction', watchSendTransaction),
  });
  const health = new HealthImplementation({ '': 'SERVING', [SIGNER_SERVICE]: 'SERVING' });
  health.addToServer(server);
  new ReflectionService(proto.packageDefinition).addToServer(server);

  let port: number;
  try {
    port = await new Promise<number>((resolve, reject) => {
      server.bindAsync(opts.listen, grpc.ServerCredentials.createInsecure(), (err, bound) =>
        err ? reject(err) : resolve(bound),
      );
    });
  } catch (cause) {
    idempotency.close();
    throw new CountersignError('CONFIG_INVALID', `grpcListen: cannot listen on ${opts.listen}`, {
      field: 'grpcListen',
      cause,
    });
  }
  const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  log.info({ address }, 'gRPC signer listening');

  return {
    address,
    close() {
      closing ??= (async () => {
        health.setStatus('', 'NOT_SERVING');
        health.setStatus(SIGNER_SERVICE, 'NOT_SERVING');
        for (const stream of streams) stream.abort(SHUTDOWN);
        // Graceful drain, bounded: grpc-js keeps a session open as long as its peer does (a peer
        // that cancelled streams and vanished can hold it forever), so after the in-flight calls
        // have answered and the grace period is over, the remaining sessions are cut.
        const graceful = new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
        const deadline = new Promise<void>((resolve) =>
          setTimeout(resolve, opts.drainTimeoutMs ?? 5000).unref(),
        );
        await Promise.race([graceful, deadline]);
        log.debug({ inFlight }, 'drain deadline reached or sessions closed');
        if (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve));
        server.forceShutdown();
        idempotency.close();
        log.info({ address }, 'gRPC signer stopped');
      })();
      return closing;
    },
  };
}

function splitHostPort(listen: string): { host: string; port: string } {
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
