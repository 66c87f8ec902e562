/** `countersign init | serve`: the command-line contract of DESIGN.md. */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { loadConfig, SETTINGS, type Config, type ListenAddress } from './config.js';
import { createLogger } from './logger.js';
import { CountersignError, isCountersignError, toRpcStatus } from './shared/errors.js';
import { NATIVE_SECP256K1_LOADED } from './shared/secp256k1.js';
import { openEmbeddedService, type Credentials, type EmbeddedService } from './service/embedded.js';
import { startServiceWorker } from './service/worker-host.js';
import { startHttpServer, type HttpListener } from './service/api/http-server.js';
import { ApiKeyStamper } from './client/stamper.js';
import { PublicApiClient } from './client/client.js';
import { inProcessTransport } from './client/in-process-transport.js';
import { httpTransport } from './client/http-transport.js';
import type { Transport } from './client/transport.js';
import { startDaemon, type RunningDaemon } from './daemon/start-daemon.js';

const USAGE = `countersign — transaction-signing daemon with an embedded Turnkey-compatible wallet service

Usage:
  countersign serve [options]   start the gRPC signer, the public API and the auth proxy
                                (with --api-url: the gRPC signer alone, against a remote API)
  countersign init [options]    initialize the data dir (organization, root API key, default wallet)
  countersign --help

Options (flag / environment variable / default):
${SETTINGS.map((s) => `  --${s.flag.padEnd(20)} ${s.env.padEnd(32)} ${s.def === '' ? '-' : s.def}\n      ${s.help}`).join('\n')}
  --config FILE              COUNTERSIGN_CONFIG               -
      JSON file with any of the settings above (keys: ${SETTINGS.map((s) => s.key).join(', ')})
  COUNTERSIGN_MASTER_KEY (environment only): 32-byte master key, hex or base64; otherwise
      <data-dir>/master.key is created and used.

Flags beat environment, environment beats the config file, the file beats defaults.
When every listener is up, serve prints one line 'ready {json}' to stdout; logs go to stderr.
`;

const fmt = (a: ListenAddress) => `${a.host.includes(':') ? `[${a.host}]` : a.host}:${a.port}`;

function assertNativeCrypto(): void {
  if (!NATIVE_SECP256K1_LOADED)
    throw new CountersignError(
      'INTERNAL',
      'native libsecp256k1 is not loaded; refusing to start on the slow path',
    );
}

async function openEmbedded(config: Config, logger: Logger): Promise<EmbeddedService> {
  return openEmbeddedService({
    dataDir: config.dataDir,
    logger: logger.child({ module: 'service' }),
    masterKeyEnv: config.masterKey,
    maxRequestAgeMs: config.maxRequestAgeMs,
    maxClockSkewMs: config.maxClockSkewMs,
    chainRpc: config.chainRpc,
  });
}

interface ApiKeyFile {
  apiPublicKey: string;
  apiPrivateKey: string;
  organizationId?: string;
}

function readApiKeyFile(path: string): ApiKeyFile {
  let v: unknown;
  try {
    v = JSON.parse(readFileSync(path, 'utf8'));
  } catch (cause) {
    throw new CountersignError('CONFIG_INVALID', `--api-key-file: ${path} is unreadable or not JSON`, {
      cause,
      field: 'api-key-file',
    });
  }
  const o = v as Record<string, unknown>;
  if (typeof o.apiPublicKey !== 'string' || typeof o.apiPrivateKey !== 'string')
    throw new CountersignError(
      'CONFIG_INVALID',
      `--api-key-file: ${path} needs apiPublicKey and apiPrivateKey`,
      { field: 'api-key-file' },
    );
  return {
    apiPublicKey: o.apiPublicKey,
    apiPrivateKey: o.apiPrivateKey,
    ...(typeof o.organizationId === 'string' ? { organizationId: o.organizationId } : {}),
  };
}

/** A listener for the auth proxy: health now, the /v1 endpoints when the proxy lands. */
function proxyHandler(): (req: { path: string }) => Promise<{ status: number; body: Uint8Array }> {
  return async (req) => {
    const e = new CountersignError(
      'ROUTE_NOT_FOUND',
      `auth proxy endpoint ${req.path} is not served by this version`,
    );
    return { status: 404, body: Buffer.from(JSON.stringify(toRpcStatus(e))) };
  };
}

async function serve(config: Config, logger: Logger, out: (line: string) => void): Promise<number> {
  assertNativeCrypto();
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  if (config.allowPrivateNetwork)
    logger.warn(
      'allow-private-network is on: outbound calls (webhooks, OIDC, OAuth) may use http and reach loopback and private addresses; never use this in production',
    );
  const closers: (() => Promise<void>)[] = [];
  let transport: Transport;
  let stamper: ApiKeyStamper;
  let organizationId: string;
  let credentials: Credentials | undefined;
  let sponsorAddress: string | undefined;
  let api: HttpListener | undefined;
  let proxy: HttpListener | undefined;
  if (config.apiUrl !== undefined) {
    if (config.apiKeyFile === undefined)
      throw new CountersignError('CONFIG_INVALID', '--api-key-file is required with --api-url', {
        field: 'api-key-file',
      });
    const key = readApiKeyFile(config.apiKeyFile);
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
    const service = await startServiceWorker({
      dataDir: config.dataDir,
      logLevel: config.logLevel,
      masterKeyEnv: config.masterKey,
      maxRequestAgeMs: config.maxRequestAgeMs,
      maxClockSkewMs: config.maxClockSkewMs,
      chainRpc: [...config.chainRpc],
      allowPrivateNetwork: config.allowPrivateNetwork,
    });
    closers.push(() => service.close());
    credentials = service.credentials;
    sponsorAddress = service.sponsorAddress;
    organizationId = credentials.organizationId;
    stamper = new ApiKeyStamper(credentials);
    transport = inProcessTransport(service.handler);
    api = await startHttpServer({
      host: config.apiListen.host,
      port: config.apiListen.port,
      handler: service.handler,
      metrics: service.metrics,
      logger: logger.child({ module: 'http' }),
    });
    closers.unshift(() => (api as HttpListener).close());
    proxy = await startHttpServer({
      host: config.proxyListen.host,
      port: config.proxyListen.port,
      handler: proxyHandler(),
      logger: logger.child({ module: 'proxy' }),
    });
    closers.unshift(() => (proxy as HttpListener).close());
  }
  const client = new PublicApiClient({ transport, stamper, organizationId });
  const daemon: RunningDaemon = await startDaemon({
    listen: fmt(config.grpcListen),
    client,
    defaultOrganizationId: organizationId,
    idempotencyDbPath: join(config.dataDir, 'daemon.db'),
    logger,
  });
  closers.unshift(
    () => daemon.close(),
    () => transport.close(),
  );

  const ready = {
    grpc: daemon.address,
    ...(api === undefined ? {} : { api: `http://${api.address}` }),
    ...(proxy === undefined ? {} : { proxy: `http://${proxy.address}` }),
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
  out(
    JSON.stringify({
      organizationId: c.organizationId,
      userId: c.userId,
      walletId: c.walletId,
      credentialsFile: join(config.dataDir, 'credentials.json'),
      accounts: c.accounts,
    }),
  );
  return 0;
}

/** Runs the CLI; returns the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  let parsed;
  try {
    parsed = loadConfig(argv, process.env);
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
