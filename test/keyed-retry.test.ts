/**
 * A keyed gRPC retry always ends: the daemon recorded the body, then the service never saw it (the
 * daemon crashed, the network dropped it); retried after the service's request-age window, the
 * recorded body is stale. The service answers an identical body with its activity before it checks
 * freshness, so TIMESTAMP_STALE proves the body never ran: the daemon records a fresh one and sends
 * that, exactly once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PublicApiClient } from '../src/client/client.js';
import { inProcessTransport } from '../src/client/in-process-transport.js';
import { ApiKeyStamper } from '../src/client/stamper.js';
import type { Transport } from '../src/client/transport.js';
import { startDaemon, type RunningDaemon } from '../src/daemon/start-daemon.js';
import { CountersignError } from '../src/shared/errors.js';
import { ethAddressOf, startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { createSignerClient, type SignerClient } from './helpers/grpc-client.js';

describe('a keyed retry across a lost submission', () => {
  let h: EmbeddedHarness;
  let daemon: RunningDaemon;
  let client: SignerClient;
  let dir: string;
  let dropNext = 0;
  const submitted: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'countersign-keyed-retry-'));
    h = await startEmbedded({ maxRequestAgeMs: 1_500 });
    const inner = inProcessTransport(h.service.handler);
    // The daemon's link to the service: drops the next N submissions after the daemon recorded them.
    const lossy: Transport = {
      async send(req) {
        if (req.path.startsWith('/public/v1/submit/')) {
          submitted.push(Buffer.from(req.body).toString());
          if (dropNext > 0) {
            dropNext--;
            throw new CountersignError('UPSTREAM_UNAVAILABLE', 'connection lost');
          }
        }
        return inner.send(req);
      },
      close: () => inner.close(),
    };
    daemon = await startDaemon({
      listen: '127.0.0.1:0',
      client: new PublicApiClient({
        transport: lossy,
        stamper: new ApiKeyStamper(h.service.credentials),
        organizationId: h.service.credentials.organizationId,
      }),
      defaultOrganizationId: h.service.credentials.organizationId,
      idempotencyDbPath: join(dir, 'daemon.db'),
      logger: pino({ level: 'silent' }),
    });
    client = createSignerClient({ address: daemon.address, deadlineMs: 15_000 });
  });

  afterAll(async () => {
    client?.close();
    await daemon?.close();
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('signs once with a fresh body when the recorded one went stale unseen, and answers retries with that activity', async () => {
    const req = {
      signWith: ethAddressOf(h),
      idempotencyKey: 'payout-7',
      mode: 'SIGNING_MODE_SIGN_TRANSACTION' as const,
      ethereum: {
        type: 'ETHEREUM_TRANSACTION_TYPE_EIP1559' as const,
        chainId: '1',
        nonce: '7',
        to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
        value: '1',
        gasLimit: '21000',
        maxFeePerGas: '30000000000',
        maxPriorityFeePerGas: '1000000000',
      },
    };
    dropNext = 1;
    const lost = await client.signTransaction(req);
    expect(lost.ok).toBe(false);
    await new Promise((r) => setTimeout(r, 1_700)); // past the 1.5 s window
    const first = await client.signTransaction(req);
    expect(first.ok, JSON.stringify(!first.ok && first.error.details)).toBe(true);
    const again = await client.signTransaction(req);
    expect(again.ok).toBe(true);
    if (!first.ok || !again.ok) return;
    expect(again.response.activityId).toBe(first.response.activityId);
    expect(Buffer.from(again.response.signedTransaction)).toEqual(
      Buffer.from(first.response.signedTransaction),
    );
    // Sent: the lost body, the same body again (refused as stale), the fresh body, the fresh body again.
    expect(submitted).toHaveLength(4);
    expect(submitted[1]).toBe(submitted[0]);
    expect(submitted[2]).not.toBe(submitted[0]);
    expect(submitted[3]).toBe(submitted[2]);
    // One activity, one signature.
    const list = (
      await h.service.store.listActivities(h.service.credentials.organizationId, { limit: 100 })
    ).filter((a) => a.type === 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2');
    expect(list).toHaveLength(1);
  });
});
