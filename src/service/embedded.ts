/**
 * The embedded wallet service: opens the data dir (master key, SQLite store), initializes it on
 * first use (root organization, root user with a P-256 API key, default HD wallet), and returns the
 * public API's request handler.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { newP256ApiKey, writeSecretFile } from './localCredentials.js';
import { ensureDaemonSigner, type DaemonSignerCredentials } from './daemonSigner.js';
import type { Logger } from 'pino';
import { CountersignError } from '../shared/errors.js';
import type { RequestHandler } from '../shared/request-handler.js';
import {
  KeyVault,
  SERVICE_KEY_IDS,
  generateServiceKey,
  loadOrCreateMasterKey,
  verifyServiceKey,
} from './keys/index.js';
import { openSqliteStore } from './store/sqlite.js';
import { cachedStore } from './store/cache.js';
import type { Store } from './store/types.js';
import { buildWallet, insertWallet, type AccountSpec } from './activities/wallets.js';
import { createApiHandler } from './api/handler.js';
import { P256Verifier } from './api/p256Verifier.js';
import { Metrics } from './api/metrics.js';
import { ethChainsFrom } from './send/chains.js'; // --- eth send transaction ---
import { attachSendContext } from './send/context.js'; // --- eth send transaction ---
import { startSendTracker } from './send/tracker.js'; // --- eth send transaction ---
import { createGasStation } from './send/gasStation.js'; // --- eth send transaction ---
import { loadOrCreateSponsorKey } from './send/sponsorKey.js'; // --- eth send transaction ---
import { attachWebhookContext } from './webhooks/context.js'; // --- webhooks ---
import { startWebhookDispatcher, type WebhookDispatcherOptions } from './webhooks/dispatcher.js'; // --- webhooks ---
import { WebhookMetrics } from './webhooks/metrics.js'; // --- webhooks ---
import { ensureWebhookSigningKey, rotateWebhookSigningKey } from './webhooks/signingKeys.js'; // --- webhooks ---
import { attachAuthContext, type AuthContext } from './authProxy/context.js'; // --- auth proxy ---
import { smtpSender, twilioSender } from './authProxy/delivery.js'; // --- auth proxy ---
import type { OutboundPolicy } from '../shared/outbound/guard.js'; // --- auth proxy ---
import { startAuthProxy, type AuthProxyListener } from '../proxy/proxy.js'; // --- auth proxy ---
import { inProcessTransport } from '../client/in-process-transport.js'; // --- auth proxy ---

/** One account per supported chain (Tempo uses the Ethereum account). */
export const DEFAULT_ACCOUNTS: readonly AccountSpec[] = [
  { curve: 'CURVE_SECP256K1', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' },
  { curve: 'CURVE_ED25519', path: "m/44'/501'/0'/0'", addressFormat: 'ADDRESS_FORMAT_SOLANA' },
  { curve: 'CURVE_SECP256K1', path: "m/44'/195'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_TRON' },
  {
    curve: 'CURVE_SECP256K1',
    path: "m/84'/0'/0'/0/0",
    addressFormat: 'ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH',
  },
  { curve: 'CURVE_SECP256K1', path: "m/86'/0'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_BITCOIN_MAINNET_P2TR' },
];

/** `<data-dir>/credentials.json`: what a client needs to talk to the embedded service. */
export interface Credentials {
  organizationId: string;
  organizationName: string;
  userId: string;
  apiPublicKey: string;
  apiPrivateKey: string;
  walletId: string;
  accounts: { address: string; addressFormat: string; curve: string; path: string }[];
}

export interface EmbeddedServiceOptions {
  readonly dataDir: string;
  readonly logger: Logger;
  /**
   * `--store`: a `postgres://user@host:port/db` URL for a store shared by several replicas;
   * absent, the embedded SQLite store in the data dir.
   */
  readonly store?: string | undefined;
  readonly masterKeyEnv?: string | undefined;
  readonly maxRequestAgeMs?: number;
  readonly maxClockSkewMs?: number;
  /** `--chain-rpc`: one JSON-RPC endpoint per CAIP-2 id, for eth_send_transaction. */
  readonly chainRpc?: ReadonlyMap<string, string> | undefined;
  /** `--allow-private-network`: the outbound guard lets http, loopback and private addresses through. */
  readonly allowPrivateNetwork?: boolean;
  /** `--console-origin`: console invites register passkeys only from this origin. */
  readonly consoleOrigin?: string; // --- console ---
  /**
   * Create (or load) the gRPC daemon's non-root signer user and its signing policy. `serve` and
   * `init` ask for it; a service embedded without the daemon (tests, tools) does not.
   */
  readonly daemonSigner?: boolean;
  /** Webhook delivery tuning (retry window, backoff, attempt deadline, lanes) and test seams. */
  readonly webhooks?: WebhookDeliveryOptions;
  /** --- auth proxy --- where OTP codes go (no SMTP: email OTPs are refused; no SMS: texts are). */
  readonly delivery?: DeliveryOptions;
  /** --- auth proxy --- `--proxy-listen`: serve the auth proxy there (it holds the vault, so it runs here). */
  readonly authProxyListen?: { readonly host: string; readonly port: number } | undefined;
}

// --- auth proxy ---
export interface DeliveryOptions {
  readonly smtpUrl?: string | undefined;
  readonly smtpFrom?: string | undefined;
  readonly smsUrl?: string | undefined;
  readonly smsAccountSid?: string | undefined;
  readonly smsAuthToken?: string | undefined;
  readonly smsFrom?: string | undefined;
}

function authContextFor(d: DeliveryOptions, policy: OutboundPolicy): AuthContext {
  const sms =
    d.smsAccountSid !== undefined && d.smsAuthToken !== undefined && d.smsFrom !== undefined
      ? twilioSender({
          baseUrl: d.smsUrl ?? 'https://api.twilio.com',
          accountSid: d.smsAccountSid,
          authToken: d.smsAuthToken,
          from: d.smsFrom,
          policy,
        })
      : undefined;
  if (d.smtpUrl !== undefined && d.smtpFrom === undefined)
    throw new CountersignError('CONFIG_INVALID', '--smtp-url needs --smtp-from (the sender address)', {
      field: 'smtp-from',
    });
  const email =
    d.smtpUrl !== undefined && d.smtpFrom !== undefined
      ? smtpSender({ url: d.smtpUrl, from: d.smtpFrom, policy })
      : undefined;
  return { policy, sendEmail: email, sendSms: sms };
}
// --- end auth proxy ---

/** What an embedder may set of the webhook dispatcher (the rest comes from the service). */
export type WebhookDeliveryOptions = Partial<
  Pick<
    WebhookDispatcherOptions,
    | 'maxAgeMs'
    | 'baseDelayMs'
    | 'maxDelayMs'
    | 'attemptTimeoutMs'
    | 'concurrency'
    | 'pollMs'
    | 'resolve'
    | 'createConnection'
  >
>;

export interface EmbeddedService {
  readonly handler: RequestHandler;
  readonly store: Store;
  readonly metrics: Metrics;
  readonly credentials: Credentials;
  /** The gRPC daemon's own non-root identity (`daemon-signer.json`), when asked for. */
  readonly daemonSigner: DaemonSignerCredentials | undefined;
  /**
   * The service's export-bundle signing key (uncompressed P-256, hex): the `enclaveQuorumPublic` of
   * every export bundle. Also served by the `get_service_public_keys` query.
   */
  readonly signerPublicKey: string;
  /** The gas station's sponsor address: fund it on each chain that sends sponsored batches. */
  readonly sponsorAddress: `0x${string}`;
  /** Adds a webhook signing key that signs from now on; the old ones stay published a while. */
  rotateWebhookSigningKey(): Promise<{ readonly keyId: string }>; // --- webhooks ---
  /** True if this open initialized the store (false: it was initialized before). */
  readonly initializedNow: boolean;
  close(): Promise<void>;
}

const CREDENTIALS_FILE = 'credentials.json';

/** Creates the root organization, its root user and API key, and the default wallet. */
async function initialize(
  store: Store,
  vault: KeyVault,
  dataDir: string,
  logger: Logger,
): Promise<Credentials> {
  const now = Date.now();
  const organizationId = randomUUID();
  const userId = randomUUID();
  const apiKey = newP256ApiKey();
  const built = buildWallet(vault, organizationId, 'Default Wallet', DEFAULT_ACCOUNTS, 12, now, 'wallet');
  await store.write(async (tx) => {
    await tx.insertOrganization({
      id: organizationId,
      name: 'Root Organization',
      parentId: null,
      rootQuorumThreshold: 1,
      createdAtMs: now,
    });
    await tx.insertUser({
      id: userId,
      organizationId,
      name: 'root',
      email: null,
      phoneNumber: null,
      isRoot: true,
      createdAtMs: now,
      updatedAtMs: now,
    });
    await tx.insertApiKey({
      id: randomUUID(),
      userId,
      organizationId,
      name: 'root api key',
      publicKey: apiKey.publicKey,
      curve: 'API_KEY_CURVE_P256',
      expiresAtMs: null,
      createdAtMs: now,
    });
    await insertWallet(tx, built, 'wallet.walletName');
  });
  const credentials: Credentials = {
    organizationId,
    organizationName: 'Root Organization',
    userId,
    apiPublicKey: apiKey.publicKey,
    apiPrivateKey: apiKey.privateKey,
    walletId: built.wallet.id,
    accounts: built.accounts.map((a) => ({
      address: a.address,
      addressFormat: a.addressFormat,
      curve: a.curve,
      path: a.path,
    })),
  };
  writeSecretFile(dataDir, CREDENTIALS_FILE, `${JSON.stringify(credentials, null, 2)}\n`);
  logger.info({ organizationId, walletId: built.wallet.id }, 'initialized data dir');
  return credentials;
}

/**
 * Loads the service's signing key, creating and storing it (sealed by the vault) on first use —
 * also for data dirs initialized before the key existed — and checks it opens under this master key.
 */
async function loadOrCreateServiceKey(
  store: Store,
  vault: KeyVault,
  logger: Logger,
  id: (typeof SERVICE_KEY_IDS)[number],
): Promise<string> {
  let key = await store.getServiceKey(id);
  if (key === undefined) {
    const fresh = generateServiceKey(vault, id);
    key = await store.write(
      async (tx) => await tx.insertServiceKeyIfAbsent({ ...fresh, createdAtMs: Date.now() }),
    );
    logger.info({ keyId: id, publicKey: key.publicKey }, 'created a service key');
  }
  try {
    verifyServiceKey(vault, key);
  } catch (cause) {
    throw new CountersignError(
      'CONFIG_INVALID',
      'the master key does not open the keys in this store: it was initialized with another master key (COUNTERSIGN_MASTER_KEY or <data-dir>/master.key)',
      { cause },
    );
  }
  return key.publicKey;
}

function readCredentials(dataDir: string): Credentials {
  const path = join(dataDir, CREDENTIALS_FILE);
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Credentials;
  } catch (cause) {
    throw new CountersignError('CONFIG_INVALID', `${path} is unreadable or not JSON`, { cause });
  }
}

/**
 * Opens the configured store, applying what migrations it lacks (PostgreSQL: under an advisory
 * lock, so replicas starting at once take turns). `countersign migrate` is this and close.
 */
export async function openStore(
  opts: Pick<EmbeddedServiceOptions, 'dataDir' | 'store'>,
  /** SQLite: whether a durable write's fdatasync may run on the store's thread (see WalSync). */
  syncInline?: () => boolean,
): Promise<Store> {
  const url = opts.store;
  if (url === undefined || url === '')
    return cachedStore(
      openSqliteStore(join(opts.dataDir, 'countersign.db'), syncInline === undefined ? {} : { syncInline }),
    );
  // The PostgreSQL store (and its driver) loads only when one is configured.
  if (/^postgres(ql)?:\/\//.test(url)) return (await import('./store/postgres.js')).openPostgresStore(url);
  throw new CountersignError(
    'CONFIG_INVALID',
    'store: must be a postgres:// URL (or absent for SQLite in the data dir)',
    {
      field: 'store',
    },
  );
}

/** Opens the data dir, initializing it first if it holds no organization yet. */
export async function openEmbeddedService(opts: EmbeddedServiceOptions): Promise<EmbeddedService> {
  mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  const masterKey = loadOrCreateMasterKey({ dataDir: opts.dataDir, envValue: opts.masterKeyEnv });
  const vault = new KeyVault(masterKey);
  masterKey.fill(0);
  // Public-API requests being answered. With none but the one waiting, its fdatasync runs on this
  // thread: the pool's round trip (two thread wake-ups) costs a lone request more than the sync.
  const inHand = { count: 0 };
  const store = await openStore(opts, () => inHand.count <= 1);
  let credentials: Credentials;
  let initializedNow = false;
  try {
    credentials = existsSync(join(opts.dataDir, CREDENTIALS_FILE))
      ? readCredentials(opts.dataDir)
      : await store.exclusive(async () => {
          // Under the deployment-wide lock: of replicas started at once on an empty database, one
          // initializes it and the others find it initialized.
          const root = await store.getRootOrganization();
          initializedNow = root === undefined;
          if (root === undefined) return initialize(store, vault, opts.dataDir, opts.logger);
          throw new CountersignError(
            'CONFIG_INVALID',
            `the store is already initialized (organization ${root.id}) but ${join(opts.dataDir, CREDENTIALS_FILE)} is missing: copy it from the data dir that initialized the store`,
          );
        });
  } catch (e) {
    await store.close();
    throw e;
  }
  const daemonSigner =
    opts.daemonSigner === true
      ? await ensureDaemonSigner({
          store,
          dataDir: opts.dataDir,
          organizationId: credentials.organizationId,
          logger: opts.logger,
        })
      : undefined;
  // One after another: each may be a first write of the data dir.
  for (const id of SERVICE_KEY_IDS) await loadOrCreateServiceKey(store, vault, opts.logger, id);
  const signerPublicKey = await loadOrCreateServiceKey(store, vault, opts.logger, SERVICE_KEY_IDS[0]);
  // --- replicas --- one process serves a SQLite store: leases a killed run left end now, so the
  // retry of a reserved body takes it over at once. PostgreSQL replicas' leases run out instead.
  if (store.engine === 'sqlite') await store.write(async (tx) => await tx.expireActivityLeases());
  // The name this replica's leases and claims carry (activities, sends, webhook deliveries).
  const replicaId = randomUUID();
  opts.logger.info({ replicaId, store: store.engine }, 'replica started');
  const metrics = new Metrics();
  const p256Verifier = new P256Verifier(opts.logger);
  const handler = createApiHandler({
    replicaId,
    inHand,
    p256Verifier,
    store,
    vault,
    logger: opts.logger.child({ module: 'api' }),
    metrics,
    maxRequestAgeMs: opts.maxRequestAgeMs ?? 60 * 60 * 1000,
    maxClockSkewMs: opts.maxClockSkewMs ?? 5 * 60 * 1000,
    ...(opts.consoleOrigin === undefined ? {} : { consoleOrigins: [opts.consoleOrigin] }), // --- console ---
  });
  // --- eth send transaction --- chains, and the tracker that broadcasts and follows sends
  // (picking up what a previous run left pending); stopped before the store closes.
  const chains = ethChainsFrom(opts.chainRpc ?? new Map());
  const sponsor = await loadOrCreateSponsorKey(store, vault, opts.logger);
  const tracker = startSendTracker({
    replicaId,
    store,
    chains,
    vault,
    sponsor,
    logger: opts.logger.child({ module: 'send-tracker' }),
  });
  const gasStation = createGasStation({
    store,
    vault,
    sponsor,
    logger: opts.logger.child({ module: 'gas-station' }),
  });
  attachSendContext(store, { chains, gasStation, kick: (id) => tracker.kick(id) });
  // --- end eth send transaction ---
  // --- webhooks --- the signing key, then the dispatcher (which picks up what a previous run left).
  await ensureWebhookSigningKey(store, vault, opts.logger);
  const policy = { allowPrivateNetwork: opts.allowPrivateNetwork ?? false };
  const webhookMetrics = new WebhookMetrics();
  metrics.addSection(() => webhookMetrics.render());
  // The embedded store has one dispatcher (this one): leases a killed run left are released now.
  // Replicas on PostgreSQL leave each other's leases alone: they run out instead (--- replicas ---).
  if (store.engine === 'sqlite') await store.write(async (tx) => await tx.releaseWebhookLeases());
  const dispatcher = startWebhookDispatcher({
    ...opts.webhooks,
    replicaId,
    store,
    vault,
    logger: opts.logger.child({ module: 'webhooks' }),
    metrics: webhookMetrics,
    policy,
  });
  attachWebhookContext(store, { policy, wake: () => dispatcher.wake() });
  // --- end webhooks ---
  attachAuthContext(store, authContextFor(opts.delivery ?? {}, policy)); // --- auth proxy ---
  // --- auth proxy --- forwarding through src/client, like any other client of the public API.
  const authProxy: AuthProxyListener | undefined =
    opts.authProxyListen === undefined
      ? undefined
      : await startAuthProxy({
          ...opts.authProxyListen,
          store,
          vault,
          transport: inProcessTransport(handler),
          logger: opts.logger.child({ module: 'proxy' }),
        });
  // --- end auth proxy ---
  const close = async () => {
    await authProxy?.close(); // --- auth proxy ---
    await dispatcher.stop(); // --- webhooks ---
    await tracker.stop();
    await store.close();
    await p256Verifier.close();
  };
  return {
    handler,
    store,
    metrics,
    credentials,
    daemonSigner,
    signerPublicKey,
    sponsorAddress: sponsor.address,
    rotateWebhookSigningKey: async () => ({ keyId: (await rotateWebhookSigningKey(store, vault)).id }), // --- webhooks ---
    initializedNow,
    close,
  };
}
