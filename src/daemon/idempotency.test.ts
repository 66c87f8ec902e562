import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { IdempotencyStore } from './idempotency.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function dbPath(): string {
  const d = mkdtempSync(join(tmpdir(), 'countersign-idem-'));
  dirs.push(d);
  return join(d, 'idempotency.sqlite');
}

const claim = (body: string, hash = 1) => ({
  organizationId: 'org',
  method: 'SignTransaction',
  idempotencyKey: 'k',
  requestHash: new Uint8Array(32).fill(hash),
  activityName: 'sign_transaction',
  body: new TextEncoder().encode(body),
});

describe('IdempotencyStore', () => {
  it('returns the first recorded body to a retry, also after the store is reopened', async () => {
    const path = dbPath();
    const a = new IdempotencyStore(path);
    expect((await a.claim(claim('first'))).replayed).toBe(false);
    await a.close();
    const b = new IdempotencyStore(path);
    const again = await b.claim(claim('second'));
    expect(again.replayed).toBe(true);
    expect(new TextDecoder().decode(again.body)).toBe('first');
    expect(again.activityName).toBe('sign_transaction');
    await b.close();
  });

  it('refuses a different request under a used key with IDEMPOTENCY_KEY_CONFLICT', async () => {
    const store = new IdempotencyStore(dbPath());
    await store.claim(claim('first'));
    await expect(store.claim(claim('other', 2))).rejects.toThrow(
      expect.objectContaining({ code: 'IDEMPOTENCY_KEY_CONFLICT', field: 'idempotency_key' }),
    );
    await store.close();
  });

  it('keeps keys apart per organization and method', async () => {
    const store = new IdempotencyStore(dbPath());
    await store.claim(claim('first'));
    expect((await store.claim({ ...claim('x', 2), organizationId: 'org2' })).replayed).toBe(false);
    expect((await store.claim({ ...claim('x', 2), method: 'SignMessage' })).replayed).toBe(false);
    await store.close();
  });

  it('a claim that finds the write lock taken (the checkpointer restarting the WAL) waits without holding the thread', async () => {
    const path = dbPath();
    const store = new IdempotencyStore(path);
    const other = new Database(path);
    try {
      other.prepare('BEGIN IMMEDIATE').run();
      // Released from a timer on this thread: a claim that slept in SQLite's busy handler would hold
      // the thread until its busy timeout ran out, and fail.
      const events: string[] = [];
      setTimeout(() => {
        events.push('released');
        other.prepare('COMMIT').run();
      }, 50);
      expect((await store.claim(claim('first'))).replayed).toBe(false);
      events.push('claimed');
      expect(events).toEqual(['released', 'claimed']);
    } finally {
      other.close();
      await store.close();
    }
  });
});
