/**
 * With many requests in hand, the handler sends P-256 stamp checks in batches to its verifier's
 * thread: every request of a burst is still checked over its own body, and a bad stamp among good
 * ones is refused alone.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyStamper } from '../src/client/stamper.js';
import { openEmbeddedService } from '../src/service/embedded.js';
import { openSqliteStore } from '../src/service/store/sqlite.js';
import type { Store } from '../src/service/store/types.js';
import { KeyVault, loadOrCreateMasterKey } from '../src/service/keys/index.js';
import { createApiHandler } from '../src/service/api/handler.js';
import { Metrics } from '../src/service/api/metrics.js';
import { P256Verifier } from '../src/service/api/p256Verifier.js';
import type { RequestHandler } from '../src/shared/request-handler.js';

let dataDir: string;
let store: Store;
let handler: RequestHandler;
let stamper: ApiKeyStamper;
let organizationId: string;
const verifier = new P256Verifier();

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'countersign-stamp-batches-'));
  const logger = pino({ level: 'silent' });
  const svc = await openEmbeddedService({ dataDir, logger });
  const creds = svc.credentials;
  await svc.close();
  organizationId = creds.organizationId;
  stamper = new ApiKeyStamper({ apiPublicKey: creds.apiPublicKey, apiPrivateKey: creds.apiPrivateKey });
  const masterKey = loadOrCreateMasterKey({ dataDir });
  const vault = new KeyVault(masterKey);
  masterKey.fill(0);
  store = openSqliteStore(join(dataDir, 'countersign.db'));
  handler = createApiHandler({
    store,
    vault,
    logger,
    metrics: new Metrics(),
    maxRequestAgeMs: 60_000,
    maxClockSkewMs: 60_000,
    p256Verifier: verifier,
  });
});

afterAll(async () => {
  await verifier.close();
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('stamp checks in batches', () => {
  it('checks each of a burst of requests over its own body, refusing the one whose stamp is bad', async () => {
    const bodies = Array.from({ length: 24 }, () => Buffer.from(JSON.stringify({ organizationId })));
    const stamps = bodies.map((b) => stamper.stamp(b));
    // Request 13 carries the stamp of another body (the same JSON with a space added).
    stamps[13] = stamper.stamp(Buffer.from(`${JSON.stringify({ organizationId })} `));
    const answers = await Promise.all(
      bodies.map((body, i) =>
        handler({
          path: '/public/v1/query/whoami',
          headers: { 'content-type': 'application/json', 'x-stamp': stamps[i] as string },
          body,
        }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(23);
    expect(statuses[13]).toBe(401);
    const refusal = JSON.parse(Buffer.from((answers[13] as { body: Uint8Array }).body).toString());
    expect(refusal.message).toMatch(/could not verify api key signature/);
    // All 24 were in hand at once (each is counted before its first await), so every check, the bad
    // one included, went to the verifier's thread.
    expect(verifier.stats.checks).toBe(24);
  });
});
