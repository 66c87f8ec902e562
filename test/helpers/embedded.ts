/**
 * Starts the real embedded service behind a real HTTP listener on an ephemeral port: SQLite in a
 * temp dir, or with `COUNTERSIGN_TEST_STORE=postgres` a fresh PostgreSQL database per data dir
 * (kept across a restart on the same dir, dropped with it).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import {
  openEmbeddedService,
  type EmbeddedService,
  type WebhookDeliveryOptions,
  type DeliveryOptions,
} from '../../src/service/embedded.js';
import { startHttpServer, type HttpListener } from '../../src/service/api/http-server.js';
import { createTestDatabase, type TestDatabase } from './pgdb.js';

const databases = new Map<string, TestDatabase>();

/** The store URL a harness on `dataDir` uses: undefined (SQLite) unless the suite runs on PostgreSQL. */
export async function testStoreFor(dataDir: string): Promise<string | undefined> {
  if (process.env.COUNTERSIGN_TEST_STORE !== 'postgres') return undefined;
  let db = databases.get(dataDir);
  if (db === undefined) {
    db = await createTestDatabase('cs_suite');
    databases.set(dataDir, db);
  }
  return db.url;
}

/**
 * What the store keeps on disk, to search for plaintext: the SQLite files in the data dir, or a
 * data dump of the PostgreSQL database (bytea appears hex-encoded there: search for the hex too).
 */
export async function storedDatabaseBytes(dataDir: string): Promise<{ name: string; bytes: Buffer }[]> {
  const db = databases.get(dataDir);
  if (db === undefined)
    return readdirSync(dataDir)
      .filter((f) => f.startsWith('countersign.db'))
      .map((f) => ({ name: f, bytes: readFileSync(join(dataDir, f)) }));
  const { stdout } = await promisify(execFile)('pg_dump', ['--data-only', db.url], { maxBuffer: 1 << 28 });
  return [{ name: 'pg_dump', bytes: Buffer.from(stdout) }];
}

/** Drops the database a harness on `dataDir` used, if any. */
export async function dropTestStore(dataDir: string): Promise<void> {
  const db = databases.get(dataDir);
  databases.delete(dataDir);
  await db?.drop();
}

export interface EmbeddedHarness {
  readonly dataDir: string;
  readonly baseUrl: string;
  readonly service: EmbeddedService;
  readonly http: HttpListener;
  readonly logger: Logger;
  close(opts?: { keepDir?: boolean }): Promise<void>;
}

export async function startEmbedded(
  opts: {
    dataDir?: string;
    logger?: Logger;
    maxRequestAgeMs?: number;
    maxClockSkewMs?: number;
    /** CAIP-2 id → JSON-RPC URL, as `--chain-rpc` gives it. */
    chainRpc?: ReadonlyMap<string, string>;
    /** `--allow-private-network` (webhooks to a receiver on loopback). */
    allowPrivateNetwork?: boolean;
    webhooks?: WebhookDeliveryOptions;
    /** OTP delivery (--smtp-*, --sms-*). */
    delivery?: DeliveryOptions;
  } = {},
): Promise<EmbeddedHarness> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'countersign-test-'));
  const logger = opts.logger ?? pino({ level: 'silent' });
  const store = await testStoreFor(dataDir);
  const service = await openEmbeddedService({
    dataDir,
    logger,
    ...(store === undefined ? {} : { store }),
    ...(opts.maxRequestAgeMs === undefined ? {} : { maxRequestAgeMs: opts.maxRequestAgeMs }),
    ...(opts.maxClockSkewMs === undefined ? {} : { maxClockSkewMs: opts.maxClockSkewMs }),
    ...(opts.chainRpc === undefined ? {} : { chainRpc: opts.chainRpc }),
    ...(opts.allowPrivateNetwork === undefined ? {} : { allowPrivateNetwork: opts.allowPrivateNetwork }),
    ...(opts.webhooks === undefined ? {} : { webhooks: opts.webhooks }),
    ...(opts.delivery === undefined ? {} : { delivery: opts.delivery }),
  });
  const http = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    handler: service.handler,
    metrics: () => service.metrics.render(),
    logger,
  });
  return {
    dataDir,
    baseUrl: `http://${http.address}`,
    service,
    http,
    logger,
    close: async (o = {}) => {
      await http.close();
      await service.close();
      if (o.keepDir !== true) {
        rmSync(dataDir, { recursive: true, force: true });
        await dropTestStore(dataDir);
      }
    },
  };
}

/** The default wallet's Ethereum address. */
export function ethAddressOf(h: EmbeddedHarness): `0x${string}` {
  const a = h.service.credentials.accounts.find((x) => x.addressFormat === 'ADDRESS_FORMAT_ETHEREUM');
  if (a === undefined) throw new Error('default wallet has no Ethereum account');
  return a.address as `0x${string}`;
}
