import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { allowPolicy } from '../../../test/helpers/records.js';
import { cachedStore } from './cache.js';
import { openSqliteStore } from './sqlite.js';
import type { ActivityRecord, Store } from './types.js';

const NOW = 1_700_000_000_000;
const nextTurn = () => new Promise<void>((r) => setImmediate(r));

/** Counts the reads that reach the database under the cache. */
function counting(store: Store): { store: Store; reads: Map<string, number> } {
  const reads = new Map<string, number>();
  const counted = { ...store } as Record<string, unknown>;
  for (const [name, v] of Object.entries(store))
    if (
      typeof v === 'function' &&
      (name.startsWith('get') || name.startsWith('list') || name.startsWith('find'))
    )
      counted[name] = (...a: unknown[]) => {
        reads.set(name, (reads.get(name) ?? 0) + 1);
        return (v as (...x: unknown[]) => unknown)(...a);
      };
  return { store: counted as unknown as Store, reads };
}

const policy = (org: string, name: string) => allowPolicy(org, name, NOW);

describe('the store read cache', () => {
  let dir: string;
  let base: Store;
  let other: Store | undefined;
  const org = randomUUID();

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cs-cache-'));
    base = openSqliteStore(join(dir, 'countersign.db'));
    await base.write(async (tx) => {
      await tx.insertOrganization({
        id: org,
        name: 'Org',
        parentId: null,
        rootQuorumThreshold: 1,
        createdAtMs: NOW,
      });
      await tx.insertPolicy(policy(org, 'first'));
    });
  });
  afterEach(async () => {
    await other?.close();
    other = undefined;
    await base.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a repeated read from memory', async () => {
    const { store, reads } = counting(base);
    const cache = cachedStore(store);
    expect((await cache.getOrganization(org))?.name).toBe('Org');
    expect((await cache.getOrganization(org))?.name).toBe('Org');
    expect((await cache.listPolicies(org)).map((p) => p.name)).toEqual(['first']);
    expect((await cache.listPolicies(org)).map((p) => p.name)).toEqual(['first']);
    expect(reads.get('getOrganization')).toBe(1);
    expect(reads.get('listPolicies')).toBe(1);
  });

  it('does not keep a miss', async () => {
    const { store, reads } = counting(base);
    const cache = cachedStore(store);
    const unknown = randomUUID();
    expect(await cache.getOrganization(unknown)).toBeUndefined();
    expect(await cache.getOrganization(unknown)).toBeUndefined();
    expect(reads.get('getOrganization')).toBe(2);
  });

  it("keeps an authenticated read's empty list, but not an empty answer to a key the caller chose", async () => {
    const { store, reads } = counting(base);
    const cache = cachedStore(store);
    const user = randomUUID();
    expect(await cache.listUserTagIds(user)).toEqual([]);
    expect(await cache.listUserTagIds(user)).toEqual([]);
    expect(reads.get('listUserTagIds')).toBe(1);
    expect(await cache.findApiKeys('02ab', [org])).toEqual([]);
    expect(await cache.findApiKeys('02ab', [org])).toEqual([]);
    expect(reads.get('findApiKeys')).toBe(2);
  });

  it('shows a change written through it as soon as the write resolves', async () => {
    const cache = cachedStore(base);
    expect((await cache.listPolicies(org)).length).toBe(1);
    await cache.write(async (tx) => tx.insertPolicy(policy(org, 'second')));
    expect((await cache.listPolicies(org)).map((p) => p.name).sort()).toEqual(['first', 'second']);
    await cache.write(async (tx) => {
      await tx.renameOrganization(org, 'Renamed');
    });
    expect((await cache.getOrganization(org))?.name).toBe('Renamed');
  });

  it('keeps what it holds across writes of activity records only', async () => {
    const { store, reads } = counting(base);
    const cache = cachedStore(store);
    await cache.listPolicies(org);
    const activity: ActivityRecord = {
      id: randomUUID(),
      organizationId: org,
      type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
      status: 'ACTIVITY_STATUS_COMPLETED',
      fingerprint: `sha256:${randomUUID()}`,
      intentKey: 'signRawPayloadIntentV2',
      intentJson: '{}',
      resultKey: 'signRawPayloadResult',
      resultJson: '{}',
      failureJson: null,
      timestampMs: String(NOW),
      createdAtMs: NOW,
      updatedAtMs: NOW,
    };
    await cache.write(async (tx) => tx.insertActivity(activity, []));
    await cache.listPolicies(org);
    expect(reads.get('listPolicies')).toBe(1);
  });

  it('does not keep a read that ran while a change was being written', async () => {
    const cache = cachedStore(base);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const writing = cache.write(async (tx) => {
      await tx.insertPolicy(policy(org, 'second'));
      await held;
    });
    await nextTurn();
    // Reads the committed state (one policy) while the write is open; that answer must not stay.
    expect((await cache.listPolicies(org)).length).toBe(1);
    release();
    await writing;
    expect((await cache.listPolicies(org)).length).toBe(2);
  });

  it('sees a change another connection committed from the next turn of the event loop on', async () => {
    const cache = cachedStore(base);
    expect((await cache.getOrganization(org))?.name).toBe('Org');
    other = openSqliteStore(join(dir, 'countersign.db'), { backgroundCheckpoint: false });
    await other.write(async (tx) => {
      await tx.renameOrganization(org, 'Elsewhere');
    });
    await nextTurn();
    expect((await cache.getOrganization(org))?.name).toBe('Elsewhere');
  });

  it('leaves a store that cannot tell outside changes uncached', () => {
    const { externalVersion: _, ...plain } = base;
    expect(cachedStore(plain as Store)).toBe(plain);
  });
});
