/** Starts the real embedded service (SQLite in a temp dir) behind a real HTTP listener on an ephemeral port. */
import { mkdtempSync, rmSync } from 'node:fs';
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
  const service = await openEmbeddedService({
    dataDir,
    logger,
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
      if (o.keepDir !== true) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The default wallet's Ethereum address. */
export function ethAddressOf(h: EmbeddedHarness): `0x${string}` {
  const a = h.service.credentials.accounts.find((x) => x.addressFormat === 'ADDRESS_FORMAT_ETHEREUM');
  if (a === undefined) throw new Error('default wallet has no Ethereum account');
  return a.address as `0x${string}`;
}
