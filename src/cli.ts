/** `countersign init | serve`: the command-line contract of DESIGN.md. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { loadConfig, SETTINGS, type Config, type ListenAddress } from './config.js';
import { createLogger } from './logger.js';
import { CountersignError, isCountersignError } from './shared/errors.js';
import { NATIVE_SECP256K1_LOADED } from './shared/secp256k1.js';
// Type-only: the service's modules load on the service thread (serve), or here on demand (init,
// migrate, console, proxy), so the gRPC thread starts without them.
import type {
  Credentials,
  DeliveryOptions, // --- auth proxy ---
  EmbeddedService,
} from './service/embedded.js';
import { startServiceWorker } from './service/worker-host.js';
import { SCHEMA_VERSION } from './service/store/schema.js';
import { startHttpServer, type HttpListener } from './service/api/http-server.js';
import { ApiKeyStamper } from './client/stamper.js';
import { PublicApiClient } from './client/client.js';
import { inProcessTransport } from './client/in-process-transport.js';
import { httpTransport } from './client/http-transport.js';
import type { Transport } from './client/transport.js';
import type { RunningDaemon } from './daemon/start-daemon.js';
import { assertGrpcListenerSecure } from './daemon/listen-address.js';
import { loadCallers, readApiKeyFile } from './daemon/callers.js';
import { unservedRoute } from './service/api/unserved.js';
import { CONSOLE_REDEEM_PATH } from './service/console/invite.js'; // --- console ---
import { PROXY_USAGE, proxyCommand, splitProxyArgs } from './cli-proxy.js'; // --- auth proxy ---
// --- operability ---
import type { MetricFamilies } from './observability/metrics.js';
import { aggregateText, daemonMetrics as daemonFamilies, setServiceName } from './observability/metrics.js';
import { startMetricsListener } from './observability/metrics-listener.js';
import { startTracing } from './observability/tracing.js';
// --- end operability ---

const USAGE = `countersign — transaction-signing daemon with an embedded Turnkey-compatible wallet service

Usage:
  countersign serve [options]   start the gRPC signer, the public API and the auth proxy
                                (with --api-url: the gRPC signer alone, against a remote API)
  countersign init [options]    initialize the data dir (organization, root API key, default wallet);
                                on an initialized store it changes nothing and says so
  countersign migrate [options] apply the store's pending migrations (--store, or the data dir's
                                SQLite database) and exit; serve also applies them on start
  countersign console invite --user-name NAME [--root]
                                print a one-time link that registers a passkey for the web console
  countersign proxy enable|show|set|disable [settings]
                                configure the auth proxy with the root credentials (see below)
  countersign --help

Options (flag / environment variable / default):
${SETTINGS.map((s) => `  --${s.flag.padEnd(20)} ${s.env.padEnd(32)} ${s.def === '' ? '-' : s.def}\n      ${s.help}`).join('\n')}
  --config FILE              COUNTERSIGN_CONFIG               -
      JSON file with any of the settings above (keys: ${SETTINGS.map((s) => s.key).join(', ')})
  COUNTERSIGN_MASTER_KEY (environment only): 32-byte master key, hex or base64; otherwise
      <data-dir>/master.key is created and used.

Flags beat environment, environment beats the config file, the file beats defaults.
When every listener is up, serve prints one line 'ready {json}' to stdout; logs go to stderr.

${PROXY_USAGE}`;

const fmt = (a: ListenAddress) =>
  a.unixPath !== undefined
    ? `unix:${a.unixPath}`
    : `${a.host.includes(':') ? `[${a.host}]` : a.host}:${a.port}`;

function assertNativeCrypto(): void {
  if (!NATIVE_SECP256K1_LOADED)
    throw new CountersignError(
      'INTERNAL',
      'native libsecp256k1 is not loaded; refusing to start on the slow path',
    );
}

async function openEmbedded(config: Config, logger: Logger): Promise<EmbeddedService> {
  const { openEmbeddedService } = await import('./service/embedded.js');
  return openEmbeddedService({
    dataDir: config.dataDir,
    store: config.store,
    logger: logger.child({ module: 'service' }),
    masterKeyEnv: config.masterKey,
    maxRequestAgeMs: config.maxRequestAgeMs,
    maxClockSkewMs: config.maxClockSkewMs,
    chainRpc: config.chainRpc,
    allowPrivateNetwork: config.allowPrivateNetwork,
    webhooks: { maxAgeMs: config.webhookMaxAgeMs },
    daemonSigner: true,
    delivery: deliveryOf(config), // --- auth proxy ---
  });
}

// --- auth proxy ---
function deliveryOf(config: Config): DeliveryOptions {
  return {
    smtpUrl: config.smtpUrl,
    smtpFrom: config.smtpFrom,
    smsUrl: config.smsUrl,
    smsAccountSid: config.smsAccountSid,
    smsAuthToken: config.smsAuthToken,
    smsFrom: config.smsFrom,
  };
}
// --- end auth proxy ---

let daemonMetricsSource: (() => string) | undefined;
const daemonMetrics = () => daemonMetricsSource?.() ?? '';

async function serve(config: Config, logger: Logger, out: (line: string) => void): Promise<number> {
  assertNativeCrypto();
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  if (config.allowPrivateNetwork)
    logger.warn(
      'allow-private-network is on: outbound calls (webhooks, OIDC, OAuth) may use http and reach loopback and private addresses; never use this in production',
    );
  const closers: (() => Promise<void>)[] = [];
  // --- operability ---
  setServiceName(config.serviceName);
  daemonFamilies();
  // Spans of this thread (gRPC handler, public-API call, verify); the service thread starts its own.
  if (config.otlpEndpoint !== undefined) {
    const tracing = await startTracing({ endpoint: config.otlpEndpoint, serviceName: config.serviceName });
    closers.push(async () => {
      if (!(await tracing.shutdown()))
        logger.warn(
          { otlpEndpoint: config.otlpEndpoint },
          'tracing: the collector did not take the last spans',
        );
    });
    logger.info({ otlpEndpoint: config.otlpEndpoint }, 'tracing on: spans export over OTLP/HTTP');
  }
  // The service thread's metrics (its prom-client families as data, its hand-written text).
  let serviceMetrics: () => Promise<{ text: string; families: MetricFamilies }> = async () => ({
    text: '',
    families: [],
  });
  /** Both threads' families aggregated, then the hand-written sections (disjoint names). */
  const scrape = async () => {
    const s = await serviceMetrics();
    return (await aggregateText(s.families.length === 0 ? [] : [s.families])) + s.text + daemonMetrics();
  };
  // --- end operability ---
  let transport: Transport;
  let stamper: ApiKeyStamper;
  let organizationId: string;
  let credentials: Credentials | undefined;
  let sponsorAddress: string | undefined;
  let api: HttpListener | undefined;
  let probe: (() => Promise<boolean>) | undefined;
  // Checked before anything starts: an exposed listener without TLS, a bad callers file.
  assertGrpcListenerSecure({
    listen: fmt(config.grpcListen),
    tls: config.grpcTlsCert !== undefined,
    insecure: config.grpcInsecure,
    log: logger,
  });
  const callers = config.grpcClients === undefined ? undefined : loadCallers(config.grpcClients);
  // The daemon's modules load while the service thread starts (on the other core), not before it.
  const daemonModule = import('./daemon/start-daemon.js');
  // Awaited below; until then a failed load must not count as an unhandled rejection.
  daemonModule.catch(() => undefined);
  if (config.apiUrl !== undefined) {
    if (config.apiKeyFile === undefined)
      throw new CountersignError('CONFIG_INVALID', '--api-key-file is required with --api-url', {
        field: 'api-key-file',
      });
    const key = readApiKeyFile(config.apiKeyFile, 'api-key-file');
    const org = config.organizationId ?? key.organizationId;
    if (org === undefined)
      throw new CountersignError('CONFIG_INVALID', '--organization-id is required with --api-url', {
        field: 'organization-id',
      });
    organizationId = org;
    stamper = new ApiKeyStamper(key);
    transport = httpTransport(config.apiUrl);
  } else {
    // The service runs on its own thread: signing and fsync never stall the gRPC loop.
    const service = await startServiceWorker(
      {
        dataDir: config.dataDir,
        store: config.store,
        logLevel: config.logLevel,
        masterKeyEnv: config.masterKey,
        maxRequestAgeMs: config.maxRequestAgeMs,
        maxClockSkewMs: config.maxClockSkewMs,
        chainRpc: [...config.chainRpc],
        allowPrivateNetwork: config.allowPrivateNetwork,
        webhookMaxAgeMs: config.webhookMaxAgeMs,
        ...(config.consoleOrigin === undefined ? {} : { consoleOrigin: config.consoleOrigin }), // --- console ---
        serviceName: config.serviceName, // --- operability ---
        ...(config.otlpEndpoint === undefined ? {} : { otlpEndpoint: config.otlpEndpoint }), // --- operability ---
        delivery: deliveryOf(config), // --- auth proxy ---
        authProxyListen: { host: config.proxyListen.host, port: config.proxyListen.port }, // --- auth proxy ---
      },
      {
        logger,
        // The service cannot be brought back: exit non-zero so the orchestrator restarts the process.
        onFatal: () => process.exit(70),
      },
    );
    closers.push(() => service.close());
    serviceMetrics = () => service.metrics(); // --- operability ---
    credentials = service.credentials;
    sponsorAddress = service.sponsorAddress;
    organizationId = credentials.organizationId;
    // The daemon acts as its own non-root user, so every policy binds every gRPC call.
    stamper = new ApiKeyStamper(service.daemonSigner);
    transport = inProcessTransport(service.handler);
    probe = () => service.probe(2_000);
    api = await startHttpServer({
      host: config.apiListen.host,
      port: config.apiListen.port,
      handler: service.handler,
      // An alias of --metrics-listen's /metrics, kept for existing scrapers (this listener's own
      // refusal counters are appended by the listener).
      metrics: scrape,
      probe,
      routeExists: (path) => service.routeExists(path) || path === CONSOLE_REDEEM_PATH, // --- console ---
      unservedRoute,
      console: true, // --- console ---
      maxInFlight: config.apiMaxInFlight,
      maxBodyBytes: config.apiMaxBodyBytes,
      rateLimitPerKey: config.apiRateLimitPerKey,
      logger: logger.child({ module: 'http' }),
    });
    closers.unshift(() => (api as HttpListener).close());
    // --- auth proxy --- the proxy listener now runs in the service worker (src/proxy).
  }
  // The daemon reads an activity's outcome, not the record it sent: it asks for summaries.
  const client = new PublicApiClient({ transport, stamper, organizationId, summaries: true });
  const { startDaemon } = await daemonModule;
  const daemon: RunningDaemon = await startDaemon({
    listen: fmt(config.grpcListen),
    client,
    defaultOrganizationId: organizationId,
    idempotencyDbPath: join(config.dataDir, 'daemon.db'),
    logger,
    tls:
      config.grpcTlsCert === undefined || config.grpcTlsKey === undefined
        ? undefined
        : { certFile: config.grpcTlsCert, keyFile: config.grpcTlsKey, clientCaFile: config.grpcClientCa },
    insecure: config.grpcInsecure,
    callers,
    clientFor: (key) =>
      new PublicApiClient({
        transport,
        stamper: new ApiKeyStamper(key),
        organizationId: key.organizationId ?? organizationId,
        summaries: true,
      }),
    maxInFlight: config.grpcMaxInFlight,
    maxConnections: config.grpcMaxConnections,
    idleTimeoutMs: config.grpcIdleSeconds * 1000,
    grpcServer: config.grpcServer,
    maxWatchStreamsPerCaller: config.grpcMaxWatchStreams,
    watchMaxLifetimeMs: config.grpcWatchMaxSeconds * 1000,
    // Embedded: a round trip through the service thread and its store; remote: a whoami.
    probe:
      probe ??
      (() =>
        client.query('whoami', {}).then(
          () => true,
          () => false,
        )),
  });
  daemonMetricsSource = () => daemon.metricsText();
  // --- operability ---
  const metricsListen = config.metricsListen;
  const metricsListener =
    metricsListen === undefined
      ? undefined
      : await startMetricsListener({
          host: metricsListen.host,
          port: metricsListen.port,
          scrape: async () => (await scrape()) + (api?.metricsText() ?? ''),
          logger,
        });
  if (metricsListener !== undefined) closers.unshift(() => metricsListener.close());
  // --- end operability ---
  closers.unshift(
    () => daemon.close(),
    () => transport.close(),
  );

  const ready = {
    grpc: daemon.address,
    ...(api === undefined ? {} : { api: `http://${api.address}` }),
    ...(metricsListener === undefined ? {} : { metrics: `http://${metricsListener.address}` }), // --- operability ---
    // --- auth proxy --- served by the service worker on the configured address.
    ...(api === undefined ? {} : { proxy: `http://${fmt(config.proxyListen)}` }),
    ...(config.apiUrl === undefined ? {} : { remoteApi: config.apiUrl }),
    organizationId,
    ...(credentials === undefined
      ? {}
      : {
          dataDir: config.dataDir,
          walletId: credentials.walletId,
          accounts: credentials.accounts.map((a) => ({
            addressFormat: a.addressFormat,
            address: a.address,
            path: a.path,
          })),
        }),
    ...(sponsorAddress === undefined ? {} : { sponsorAddress }),
  };
  out(`ready ${JSON.stringify(ready)}`);
  if (credentials !== undefined) {
    logger.info(
      {
        organizationId,
        walletId: credentials.walletId,
        accounts: ready.accounts,
        grpc: ready.grpc,
        api: ready.api,
        proxy: ready.proxy,
        credentialsFile: join(config.dataDir, 'credentials.json'),
      },
      'countersign is ready',
    );
  }

  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      logger.info({ signal }, 'draining and shutting down');
      resolve();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  for (const [i, close] of closers.entries()) {
    logger.debug({ step: i }, 'closing');
    await close();
  }
  logger.info('stopped');
  return 0;
}

async function init(config: Config, logger: Logger, out: (line: string) => void): Promise<number> {
  const service = await openEmbedded(config, logger);
  const c = service.credentials;
  await service.close();
  if (!service.initializedNow)
    process.stderr.write(
      `countersign: the store is already initialized (organization ${c.organizationId}); nothing changed\n`,
    );
  out(
    JSON.stringify({
      initialized: service.initializedNow,
      organizationId: c.organizationId,
      userId: c.userId,
      walletId: c.walletId,
      credentialsFile: join(config.dataDir, 'credentials.json'),
      daemonSignerUserId: service.daemonSigner?.userId,
      daemonSignerFile: join(config.dataDir, 'daemon-signer.json'),
      accounts: c.accounts,
    }),
  );
  return 0;
}

/** Applies the store's migrations (the same as on start) and prints what the store now is. */
async function migrate(config: Config, out: (line: string) => void): Promise<number> {
  if (config.store === undefined || config.store === '')
    mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const { openStore } = await import('./service/embedded.js');
  const store = await openStore({ dataDir: config.dataDir, store: config.store });
  await store.close();
  out(JSON.stringify({ migrated: true, store: store.engine, schemaVersion: SCHEMA_VERSION }));
  return 0;
}

// --- console ---
async function consoleCommand(
  config: Config,
  args: readonly string[],
  logger: Logger,
  out: (line: string) => void,
): Promise<number> {
  if (args[0] !== 'invite' || config.userName === undefined) {
    process.stderr.write('countersign: usage: countersign console invite --user-name NAME [--root]\n');
    return 2;
  }
  const { createInvite } = await import('./service/console/cli-invite.js');
  const service = await openEmbedded(config, logger);
  try {
    const link = await createInvite(service, {
      userName: config.userName,
      root: config.root,
      consoleOrigin: config.consoleOrigin,
      apiListen: config.apiListen,
    });
    out(`Open this link within 15 minutes to register a passkey for ${config.userName} (it works once):`);
    out(link);
    return 0;
  } finally {
    await service.close();
  }
}
// --- end console ---

// --- auth proxy ---
async function proxyCli(
  config: Config,
  args: readonly string[],
  flags: readonly string[],
  logger: Logger,
  out: (line: string) => void,
): Promise<number> {
  const service = await openEmbedded(config, logger);
  try {
    const shown = await proxyCommand({
      sub: args[0],
      flags,
      credentials: service.credentials,
      transport: inProcessTransport(service.handler),
    });
    out(JSON.stringify(shown));
    return 0;
  } finally {
    await service.close();
  }
}
// --- end auth proxy ---

/** Runs the CLI; returns the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  let parsed;
  // --- auth proxy ---
  const { proxy: proxyFlags, rest } = splitProxyArgs(argv);
  // --- end auth proxy ---
  try {
    parsed = loadConfig(rest, process.env);
    if (proxyFlags.length > 0 && parsed.command !== 'proxy')
      throw new Error(`${proxyFlags[0] ?? ''}: is a setting of 'countersign proxy' only`);
  } catch (e) {
    process.stderr.write(`countersign: ${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (parsed.help || parsed.command === undefined || parsed.command === 'help') {
    out(USAGE);
    return parsed.help || parsed.command === 'help' ? 0 : 2;
  }
  const logger = createLogger(parsed.config.logLevel);
  try {
    switch (parsed.command) {
      case 'serve':
        return await serve(parsed.config, logger, out);
      case 'init':
        return await init(parsed.config, logger, out);
      case 'migrate':
        return await migrate(parsed.config, out);
      // --- console ---
      case 'console':
        return await consoleCommand(parsed.config, parsed.args, logger, out);
      // --- end console ---
      // --- auth proxy ---
      case 'proxy':
        return await proxyCli(parsed.config, parsed.args, proxyFlags, logger, out);
      // --- end auth proxy ---
      default:
        process.stderr.write(`countersign: unknown command '${parsed.command}'\n\n${USAGE}`);
        return 2;
    }
  } catch (e) {
    if (isCountersignError(e)) {
      logger.fatal({ code: e.code, field: e.field }, e.message);
      process.stderr.write(`countersign: ${e.message}\n`);
    } else {
      logger.fatal({ err: e }, 'failed');
    }
    return 1;
  }
}
