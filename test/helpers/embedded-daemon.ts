/** The gRPC daemon on an embedded service, wired as `countersign serve` wires them in embedded mode. */
import { join } from 'node:path';
import { pino } from 'pino';
import { PublicApiClient } from '../../src/client/client.js';
import { inProcessTransport } from '../../src/client/in-process-transport.js';
import { ApiKeyStamper } from '../../src/client/stamper.js';
import type { Transport } from '../../src/client/transport.js';
import { startDaemon, type RunningDaemon } from '../../src/daemon/start-daemon.js';
import type { EmbeddedHarness } from './embedded.js';

export interface EmbeddedDaemon {
  readonly transport: Transport;
  /** The daemon's client of the public API (its root credentials, in-process). */
  readonly client: PublicApiClient;
  /** Listening on an ephemeral loopback port, logging nothing. */
  readonly daemon: RunningDaemon;
}

export async function startDaemonOnEmbedded(h: EmbeddedHarness): Promise<EmbeddedDaemon> {
  const org = h.service.credentials.organizationId;
  const transport = inProcessTransport(h.service.handler);
  const client = new PublicApiClient({
    transport,
    stamper: new ApiKeyStamper(h.service.credentials),
    organizationId: org,
  });
  const daemon = await startDaemon({
    listen: '127.0.0.1:0',
    client,
    defaultOrganizationId: org,
    idempotencyDbPath: join(h.dataDir, 'daemon.db'),
    logger: pino({ level: 'silent' }),
  });
  return { transport, client, daemon };
}
