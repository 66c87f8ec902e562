/**
 * The gRPC daemon: `countersign.v1.Signer`, `grpc.health.v1.Health` and server reflection on one
 * listener. The public-API client is a dependency, so the same daemon runs embedded, against a
 * remote API, or in tests against a transport that tampers with answers.
 */
import { randomUUID } from 'node:crypto';
import { chmodSync } from 'node:fs';
import type { PeerCertificate } from 'node:tls';
import { createRequire } from 'node:module';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation } from 'grpc-health-check';
import type { Logger } from 'pino';
import type { PublicApiClient } from '../client/client.js';
import { CountersignError } from '../shared/errors.js';
import {
  authorizeCall,
  callIntentOf,
  identifyCaller,
  type ApiKeyFileContent,
  type CallerEntry,
  type SignerMethod,
} from './callers.js';
import type { CallContext, DaemonContext } from './context.js';
import { grpcTls, type GrpcTlsFiles } from './tls.js';
import { assertGrpcListenerSecure, splitHostPort } from './listen-address.js';
import { LeanGrpcServer } from './h2/server.js';
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
import { observeGrpcCall } from '../observability/metrics.js'; // --- operability ---
import { inSpan, SpanKind, tracingEnabled } from '../observability/tracing.js'; // --- operability ---

export interface StartDaemonOptions {
  /** `host:port` (port 0 binds an ephemeral port) or `unix:/path/to.sock`. */
  readonly listen: string;
  readonly client: PublicApiClient;
  readonly defaultOrganizationId: string;
  readonly idempotencyDbPath: string;
  readonly logger: Logger;
  /** How long close() waits for clients to hang up before cutting their sessions (default 5 s). */
  readonly drainTimeoutMs?: number;
  /** Server certificate and key, and for mTLS the CA of client certificates. */
  readonly tls?: GrpcTlsFiles | undefined;
  /** `--grpc-insecure`: allow a non-loopback TCP address without TLS (logged at warn). */
  readonly insecure?: boolean;
  /**
   * `--grpc-clients`: the known callers. Without it every caller that passes the transport check
   * acts as the daemon itself. `clientFor` gives the client a caller's API key stamps with.
   */
  readonly callers?: readonly CallerEntry[] | undefined;
  readonly clientFor?: (apiKey: ApiKeyFileContent) => PublicApiClient;
  /** Calls handled at once (default 256); beyond it RESOURCE_EXHAUSTED at once. */
  readonly maxInFlight?: number;
  /**
   * Connections open at once (default 1,024); one more is sent GOAWAY (ENHANCE_YOUR_CALM) and
   * closed. The lean server's limit: grpc-js's server has none.
   */
  readonly maxConnections?: number;
  /**
   * How long a connection may hold no call before it is sent GOAWAY (NO_ERROR) and closed (default
   * 300 s; 0: never). A client reconnects for its next call. Both servers apply it.
   */
  readonly idleTimeoutMs?: number;
  /** Calls one caller may have in flight (default: maxInFlight). */
  readonly maxInFlightPerCaller?: number;
  /** Open watch streams per caller (default 32) and the longest a stream stays open (default 1 h). */
  readonly maxWatchStreamsPerCaller?: number;
  readonly watchMaxLifetimeMs?: number;
  /**
   * A round trip through the public API and its store; gRPC health is SERVING only while it answers
   * (checked at start and every `healthIntervalMs`, default 5 s). Without it, SERVING while listening.
   */
  readonly probe?: () => Promise<boolean>;
  /** Another signer.proto (tests: one whose `transaction` oneof has a toy chain); default the package's. */
  readonly protoFile?: string;
  readonly healthIntervalMs?: number;
  /**
   * The HTTP/2 server under the gRPC calls: `lean` (default) frames HTTP/2 itself on the socket
   * (src/daemon/h2); `grpc-js` is @grpc/grpc-js's server on node:http2. Both serve the same
   * handlers, statuses and trailers; the tests run the same calls through both.
   */
  readonly grpcServer?: 'lean' | 'grpc-js';
}

export interface RunningDaemon {
  /** The bound `host:port` or `unix:/path`. */
  readonly address: string;
  /** Prometheus text of calls shed and refused (closed label sets). */
  metricsText(): string;
  /** Stops taking calls, lets in-flight calls finish, then closes the store. */
  close(): Promise<void>;
}

const SIGNER_SERVICE = 'countersign.v1.Signer';
/** Largest request and response message (gRPC default is 4 MiB in, unlimited out). */
const MAX_RECEIVE_BYTES = 4 * 1024 * 1024;
const MAX_SEND_BYTES = 16 * 1024 * 1024;

/** Why a call was refused before any work: a closed set, used as a metric label. */
const SHED_REASONS = [
  'in_flight',
  'caller_in_flight',
  'watch_streams',
  'unauthenticated',
  'not_allowed',
] as const;
type ShedReason = (typeof SHED_REASONS)[number];

/** What the handlers read of a call's metadata (grpc-js's Metadata and the lean server's). */
type CallMetadata = Pick<grpc.Metadata, 'get'>;

/** The first `traceparent` of a call's metadata, if it is a string. */
function traceparentOf(metadata: CallMetadata): string | undefined {
  const v = metadata.get('traceparent')[0];
  return typeof v === 'string' ? v : undefined;
}

/** Starts the gRPC daemon and resolves once it is listening. */
export async function startDaemon(opts: StartDaemonOptions): Promise<RunningDaemon> {
  const unixPath = opts.listen.startsWith('unix:') ? opts.listen.slice('unix:'.length) : undefined;
  const tcp = unixPath === undefined ? splitHostPort(opts.listen) : undefined;
  const host = tcp?.host;
  const log = opts.logger.child({ module: 'daemon' });
  assertGrpcListenerSecure({
    listen: opts.listen,
    tls: opts.tls !== undefined,
    insecure: opts.insecure === true,
    log,
  });
  const tls = opts.tls === undefined ? undefined : grpcTls(opts.tls, log);
  const proto = loadSignerProto(opts.protoFile);
  const idempotency = new IdempotencyStore(opts.idempotencyDbPath);
  const baseCtx: DaemonContext = {
    client: opts.client,
    defaultOrganizationId: opts.defaultOrganizationId,
    idempotency,
    signers: new ExpectedSignerResolver(opts.client),
  };
  const callers = opts.callers;
  // One context per configured caller: its own client (its API key) and its own idempotency scope.
  const callerCtx = new Map<string, DaemonContext>();
  for (const c of callers ?? []) {
    const client =
      c.apiKey === undefined || opts.clientFor === undefined ? opts.client : opts.clientFor(c.apiKey);
    const scope = (k: string) => `${c.name}\u0000${k}`;
    callerCtx.set(c.name, {
      client,
      defaultOrganizationId: c.apiKey?.organizationId ?? opts.defaultOrganizationId,
      idempotency: {
        claim: (x) => idempotency.claim({ ...x, idempotencyKey: scope(x.idempotencyKey) }),
        refresh: (k, stale, fresh) =>
          idempotency.refresh({ ...k, idempotencyKey: scope(k.idempotencyKey) }, stale, fresh),
      },
      signers: client === opts.client ? baseCtx.signers : new ExpectedSignerResolver(client),
    });
  }

  const maxInFlight = opts.maxInFlight ?? 256;
  const maxPerCaller = opts.maxInFlightPerCaller ?? maxInFlight;
  const maxWatch = opts.maxWatchStreamsPerCaller ?? 32;
  const watchLifetimeMs = opts.watchMaxLifetimeMs ?? 60 * 60 * 1000;
  const shed = new Map<ShedReason, number>(SHED_REASONS.map((r) => [r, 0]));
  let connectionsRefused = 0;
  let connectionsIdleClosed = 0;
  const idleTimeoutMs = opts.idleTimeoutMs ?? 300_000;
  const perCaller = new Map<string, number>();
  const watchesPerCaller = new Map<string, number>();
  const bump = (m: Map<string, number>, k: string, d: number) => {
    const v = (m.get(k) ?? 0) + d;
    if (v === 0) m.delete(k);
    else m.set(k, v);
  };

  interface CallerEvidence {
    readonly metadata: CallMetadata;
    getAuthContext(): { sslPeerCertificate?: PeerCertificate };
  }

  /** The callers-file entry the call's certificate or bearer token names; refuses an unknown caller. */
  function identify(call: CallerEvidence, file: readonly CallerEntry[]): CallerEntry {
    const auth = call.getAuthContext();
    const header = call.metadata.get('authorization')[0];
    const bearer = typeof header === 'string' ? /^Bearer\s+(\S+)$/i.exec(header)?.[1] : undefined;
    const entry = identifyCaller(file, { certificate: auth.sslPeerCertificate, bearerToken: bearer });
    if (entry === undefined) {
      shed.set('unauthenticated', (shed.get('unauthenticated') ?? 0) + 1);
      throw new CountersignError(
        'CALLER_UNKNOWN',
        'caller not recognized: present a client certificate or a bearer token listed in --grpc-clients',
      );
    }
    return entry;
  }

  /**
   * Asked when a Signer call's headers arrive: an unknown caller is refused before its message is
   * read, so what it sends (up to 4 MiB, or a compressed message that inflates to that) is never
   * decompressed or decoded. The lean server asks it itself; grpc-js's through `headersInterceptor`.
   */
  function admitHeaders(
    call: CallerEvidence & { readonly path: string },
  ): Partial<grpc.StatusObject> | undefined {
    if (callers === undefined || !call.path.startsWith(`/${SIGNER_SERVICE}/`)) return undefined;
    try {
      identify(call, callers);
      return undefined;
    } catch (e) {
      return toServiceError(e, log.child({ rpc: call.path.slice(SIGNER_SERVICE.length + 2) }));
    }
  }

  /** grpc-js's way to `admitHeaders`: the call's metadata is checked before it asks for the message. */
  const headersInterceptor: grpc.ServerInterceptor = (method, call) =>
    new grpc.ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, pass) => {
            const refusal = admitHeaders({
              path: method.path,
              metadata,
              getAuthContext: () => call.getAuthContext(),
            });
            if (refusal === undefined) pass(metadata);
            else
              call.sendStatus({
                code: refusal.code ?? grpc.status.UNAUTHENTICATED,
                details: refusal.details ?? '',
                ...(refusal.metadata === undefined ? {} : { metadata: refusal.metadata }),
              });
          },
        }),
    });

  /** Identifies and authorizes the caller; refuses (nothing submitted) an unknown or unauthorized one. */
  function admit(
    call: CallerEvidence & { readonly request: unknown },
    method: SignerMethod,
  ): { name: string; ctx: DaemonContext } {
    if (callers === undefined) return { name: '', ctx: baseCtx };
    const entry = identify(call, callers);
    try {
      authorizeCall(entry, callIntentOf(method, call.request as Record<string, unknown>));
    } catch (e) {
      shed.set('not_allowed', (shed.get('not_allowed') ?? 0) + 1);
      throw e;
    }
    return { name: entry.name, ctx: callerCtx.get(entry.name) ?? baseCtx };
  }

  const exhausted = (reason: ShedReason, message: string) => {
    shed.set(reason, (shed.get(reason) ?? 0) + 1);
    return new CountersignError('RESOURCE_LIMIT_EXCEEDED', message);
  };

  let closing: Promise<void> | undefined;
  let inFlight = 0;
  let drained: (() => void) | undefined;
  function unary<Req, Res>(
    method: SignerMethod,
    handler: (ctx: DaemonContext, call: CallContext, req: Req) => Promise<Res>,
  ): grpc.handleUnaryCall<Req, Res> {
    return (call, callback) => {
      const requestId = randomUUID();
      let admitted: { name: string; ctx: DaemonContext };
      try {
        admitted = admit(call, method);
        if (inFlight >= maxInFlight)
          throw exhausted('in_flight', `more than ${maxInFlight} calls in flight; retry with backoff`);
        if ((perCaller.get(admitted.name) ?? 0) >= maxPerCaller)
          throw exhausted(
            'caller_in_flight',
            `more than ${maxPerCaller} calls in flight for this caller; retry with backoff`,
          );
      } catch (e) {
        callback(toServiceError(e, log.child({ rpc: method, requestId })));
        return;
      }
      const { name, ctx } = admitted;
      // One child logger per call (its bindings serialized and censored once, as it is made).
      const boundLog = log.child(
        name === '' ? { rpc: method, requestId } : { rpc: method, requestId, caller: name },
      );
      inFlight++;
      bump(perCaller, name, 1);
      const started = process.hrtime.bigint();
      // The answer is sent inside the call's span, so its log lines (errors too) carry the trace id;
      // a failure is re-thrown to mark the span, then dropped.
      const run = () =>
        handler(ctx, { log: boundLog }, call.request).then(
          (res) => {
            observeGrpcCall(method, call.request, started);
            callback(null, res);
          },
          (err: unknown) => {
            observeGrpcCall(method, call.request, started, err);
            callback(toServiceError(err, boundLog));
            throw err;
          },
        );
      // The caller's W3C traceparent (gRPC metadata) parents the call's span, when tracing is on.
      (tracingEnabled()
        ? inSpan('grpc.server', run, {
            kind: SpanKind.SERVER,
            traceparent: traceparentOf(call.metadata),
            attributes: { 'rpc.system': 'grpc', 'rpc.service': SIGNER_SERVICE, 'rpc.method': method },
          })
        : run()
      )
        .catch(() => {})
        .finally(() => {
          inFlight--;
          bump(perCaller, name, -1);
          if (inFlight === 0) drained?.();
        });
    };
  }

  // Open watch streams: close() ends them (they would otherwise poll until a terminal state, and
  // the drain would wait for them).
  const streams = new Set<AbortController>();
  const SHUTDOWN = 'daemon shutting down';
  const LIFETIME = 'watch lifetime exceeded';
  function watch<Req, Res>(
    method: SignerMethod,
    handler: (ctx: DaemonContext, call: WatchCallContext, req: Req, send: (m: Res) => void) => Promise<void>,
  ): grpc.handleServerStreamingCall<Req, Res> {
    return (call) => {
      const callLog = log.child({ rpc: method, requestId: randomUUID() });
      let admitted: { name: string; ctx: DaemonContext };
      try {
        admitted = admit(call, method);
        if ((watchesPerCaller.get(admitted.name) ?? 0) >= maxWatch)
          throw exhausted(
            'watch_streams',
            `more than ${maxWatch} open watch streams for this caller; close one first`,
          );
      } catch (e) {
        call.emit('error', toServiceError(e, callLog));
        return;
      }
      const { name, ctx } = admitted;
      bump(watchesPerCaller, name, 1);
      const abort = new AbortController();
      if (closing !== undefined) abort.abort(SHUTDOWN);
      streams.add(abort);
      const lifetime = setTimeout(() => abort.abort(LIFETIME), watchLifetimeMs);
      lifetime.unref();
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
            } else if (abort.signal.reason === LIFETIME) {
              call.emit(
                'error',
                toServiceError(
                  new CountersignError(
                    'WATCH_LIFETIME_EXCEEDED',
                    `the stream was open longer than ${watchLifetimeMs} ms; open a new one to go on watching`,
                  ),
                  callLog,
                ),
              );
            } else call.end();
          },
          (err: unknown) => {
            if (!call.cancelled) call.emit('error', toServiceError(err, callLog));
          },
        )
        .finally(() => {
          clearTimeout(lifetime);
          streams.delete(abort);
          bump(watchesPerCaller, name, -1);
        });
    };
  }

  const server: Pick<grpc.Server, 'addService'> & {
    tryShutdown(cb: () => void): void;
    forceShutdown(): void;
  } =
    opts.grpcServer === 'grpc-js'
      ? new grpc.Server({
          'grpc.max_receive_message_length': MAX_RECEIVE_BYTES,
          'grpc.max_send_message_length': MAX_SEND_BYTES,
          // Channelz (grpc-js's per-call introspection registry, read through a channelz service
          // this daemon does not serve) costs ~2% of the gRPC thread per call; nothing reads it.
          'grpc.enable_channelz': 0,
          ...(idleTimeoutMs > 0 ? { 'grpc.max_connection_idle_ms': idleTimeoutMs } : {}),
          ...(callers === undefined ? {} : { interceptors: [headersInterceptor] }),
        })
      : new LeanGrpcServer({
          maxReceiveMessageBytes: MAX_RECEIVE_BYTES,
          maxSendMessageBytes: MAX_SEND_BYTES,
          onError: (err) => log.error({ err }, 'gRPC connection closed on an internal fault'),
          maxConnections: opts.maxConnections ?? 1024,
          onConnectionRefused: () => connectionsRefused++,
          ...(idleTimeoutMs > 0 ? { idleTimeoutMs, onConnectionIdle: () => connectionsIdleClosed++ } : {}),
          admitCall: admitHeaders,
        });
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
  // Health tells the truth: with a probe, SERVING only while a round trip through the public API
  // and its store answers (the CLI always passes one); without one, SERVING while the listener runs.
  const probe = opts.probe;
  const health = new HealthImplementation({
    '': probe === undefined ? 'SERVING' : 'NOT_SERVING',
    [SIGNER_SERVICE]: probe === undefined ? 'SERVING' : 'NOT_SERVING',
  });
  health.addToServer(server as grpc.Server);
  let healthy: boolean | undefined;
  const checkHealth = async () => {
    if (closing !== undefined || probe === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    const ok = await Promise.race([
      probe().catch(() => false),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(false), 3_000))),
    ]);
    clearTimeout(timer);
    if (closing !== undefined || ok === healthy) return;
    healthy = ok;
    const status = ok ? 'SERVING' : 'NOT_SERVING';
    health.setStatus('', status);
    health.setStatus(SIGNER_SERVICE, status);
    if (ok) log.info('health: the public API and its store answer');
    else log.error('health: the public API or its store does not answer; reporting NOT_SERVING');
  };
  void checkHealth();
  const healthTimer = setInterval(() => void checkHealth(), opts.healthIntervalMs ?? 5_000);
  healthTimer.unref();
  // Reflection lists the health service too (it is not in the Signer's proto).
  new ReflectionService(loadHealthDefinition(proto.packageDefinition)).addToServer(server);

  let port: number;
  try {
    if (server instanceof LeanGrpcServer)
      port = await server.listen(
        tcp === undefined ? { path: unixPath as string } : { host: tcp.host, port: Number(tcp.port) },
        tls?.lean,
      );
    else {
      const grpcServer = server as grpc.Server;
      port = await new Promise<number>((resolve, reject) => {
        grpcServer.bindAsync(
          opts.listen,
          tls?.credentials ?? grpc.ServerCredentials.createInsecure(),
          (err, bound) => (err ? reject(err) : resolve(bound)),
        );
      });
      // The certificate provider delivers the certificates on the next turn: serve no one before.
      if (tls !== undefined) for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    }
    // A socket shared with sidecars in the pod: owner and group only.
    if (unixPath !== undefined) chmodSync(unixPath, 0o660);
  } catch (cause) {
    clearInterval(healthTimer);
    tls?.close();
    await idempotency.close();
    throw new CountersignError('CONFIG_INVALID', `grpcListen: cannot listen on ${opts.listen}`, {
      field: 'grpcListen',
      cause,
    });
  }
  const address =
    unixPath !== undefined ? opts.listen : `${(host as string).includes(':') ? `[${host}]` : host}:${port}`;
  log.info(
    { address, tls: tls !== undefined, mtls: opts.tls?.clientCaFile !== undefined },
    'gRPC signer listening',
  );

  return {
    address,
    metricsText: () =>
      [
        '# HELP countersign_grpc_refused_total gRPC calls refused before any work, by reason.',
        '# TYPE countersign_grpc_refused_total counter',
        ...[...shed].map(([r, v]) => `countersign_grpc_refused_total{reason="${r}"} ${v}`),
        '# HELP countersign_grpc_connections_refused_total gRPC connections refused over --grpc-max-connections.',
        '# TYPE countersign_grpc_connections_refused_total counter',
        `countersign_grpc_connections_refused_total ${connectionsRefused}`,
        '# HELP countersign_grpc_connections_idle_closed_total gRPC connections closed after --grpc-idle-seconds without a call.',
        '# TYPE countersign_grpc_connections_idle_closed_total counter',
        `countersign_grpc_connections_idle_closed_total ${connectionsIdleClosed}`,
        '# HELP countersign_grpc_in_flight gRPC unary calls being handled.',
        '# TYPE countersign_grpc_in_flight gauge',
        `countersign_grpc_in_flight ${inFlight}`,
        '# HELP countersign_grpc_watch_streams Open watch streams.',
        '# TYPE countersign_grpc_watch_streams gauge',
        `countersign_grpc_watch_streams ${streams.size}`,
        '',
      ].join('\n'),
    close() {
      closing ??= (async () => {
        clearInterval(healthTimer);
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
        tls?.close();
        await idempotency.close();
        log.info({ address }, 'gRPC signer stopped');
      })();
      return closing;
    },
  };
}

/** The Signer's package definition plus `grpc.health.v1`, so reflection describes both services. */
function loadHealthDefinition(signer: protoLoader.PackageDefinition): protoLoader.PackageDefinition {
  const healthProto = createRequire(import.meta.url).resolve(
    'grpc-health-check/proto/health/v1/health.proto',
  );
  const health = protoLoader.loadSync(healthProto, { keepCase: true });
  return { ...signer, ...health };
}
