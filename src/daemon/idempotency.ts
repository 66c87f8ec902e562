/**
 * Idempotency for gRPC retries (reference/turnkey-api.md 12): the exact activity body is recorded
 * before its first submission, and a retry with the same key resubmits those bytes, so the public
 * API's fingerprint deduplication answers with the same activity and nothing is signed twice.
 * Bodies carry no secrets (the stamp is recomputed per send), but they are never logged.
 */
import Database from 'better-sqlite3';
import { ensurePrivateDatabaseFile } from '../shared/privateFile.js';
import { WalSync } from '../shared/walSync.js';
import { busyRetrier, startWalCheckpointer, type WalCheckpointer } from '../shared/walCheckpointer.js';
import { equalBytes } from '../shared/encoding.js';
import { CountersignError } from '../shared/errors.js';

export interface IdempotencyClaim {
  readonly organizationId: string;
  /** The gRPC method; a key is scoped to one method. */
  readonly method: string;
  readonly idempotencyKey: string;
  /** SHA-256 of the validated request, to tell a retry from a different request. */
  readonly requestHash: Uint8Array;
  /** The public API submit name (`sign_transaction`, `sign_raw_payloads`). */
  readonly activityName: string;
  /** The unstamped activity body to record if the key is new. */
  readonly body: Uint8Array;
}

export interface ClaimedBody {
  readonly activityName: string;
  readonly body: Uint8Array;
  /** True when the key was seen before and its recorded body is returned. */
  readonly replayed: boolean;
}

interface Row {
  request_hash: Buffer;
  activity_name: string;
  body: Buffer;
}

export interface IdempotencyStoreOptions {
  /** How often the WAL is checkpointed (default 250 ms). */
  readonly checkpointIntervalMs?: number;
  /** The WAL size past which it is started over (default 16 MiB). */
  readonly walRestartBytes?: number;
}

/** The SQLite table of idempotency keys and the bodies recorded under them. */
export class IdempotencyStore {
  readonly #db: Database.Database;
  readonly #sync: WalSync;
  readonly #checkpointer: WalCheckpointer | undefined;
  /** Runs a transaction without sleeping on the gRPC thread while the checkpointer restarts the WAL. */
  readonly #locked: <T>(fn: () => T) => T | Promise<T>;
  readonly #insert: Database.Statement<[string, string, string, Buffer, string, Buffer, number]>;
  readonly #select: Database.Statement<[string, string, string], Row>;
  readonly #claim: Database.Transaction<(c: IdempotencyClaim) => ClaimedBody>;
  readonly #refresh: Database.Transaction<
    (
      k: Pick<IdempotencyClaim, 'organizationId' | 'method' | 'idempotencyKey'>,
      stale: Uint8Array,
      fresh: Uint8Array,
    ) => Uint8Array
  >;

  constructor(path: string, options: IdempotencyStoreOptions = {}) {
    if (path !== ':memory:') ensurePrivateDatabaseFile(path);
    this.#db = new Database(path);
    // WAL, and each claim durable before the submit it precedes (a body lost to a power loss
    // would let a retry build, and sign, a different body): synced off this thread by WalSync,
    // which gives synchronous=FULL's guarantee without blocking the gRPC thread on the fsync.
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma('synchronous = FULL');
    this.#db.exec(`
      CREATE TABLE IF NOT EXISTS idempotency_keys (
        organization_id TEXT NOT NULL,
        method TEXT NOT NULL,
        idempotency_key TEXT NOT NULL,
        request_hash BLOB NOT NULL,
        activity_name TEXT NOT NULL,
        body BLOB NOT NULL,
        created_at_ms INTEGER NOT NULL,
        PRIMARY KEY (organization_id, method, idempotency_key)
      ) WITHOUT ROWID`);
    this.#sync = new WalSync(path);
    if (this.#sync.enabled) this.#db.pragma('synchronous = NORMAL');
    // Checkpointed on a thread of its own: SQLite's automatic checkpoint would run inside every
    // ~500th claim, on the gRPC thread.
    this.#checkpointer = startWalCheckpointer(this.#db, path, {
      intervalMs: options.checkpointIntervalMs,
      restartBytes: options.walRestartBytes ?? 16 * 1024 * 1024,
    });
    // Its statements all run in the two transactions below, which find the write lock taken while
    // the checkpointer restarts the WAL: they run again after a timer rather than sleep on the gRPC
    // thread, for as long as better-sqlite3's default busy timeout (5 s) would have waited.
    this.#locked = busyRetrier(5000, this.#db);
    this.#insert = this.#db.prepare(
      `INSERT INTO idempotency_keys
         (organization_id, method, idempotency_key, request_hash, activity_name, body, created_at_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT DO NOTHING`,
    );
    this.#select = this.#db.prepare(
      `SELECT request_hash, activity_name, body FROM idempotency_keys
        WHERE organization_id = ? AND method = ? AND idempotency_key = ?`,
    );
    // Check-and-insert in one transaction, so two concurrent first attempts record one body.
    this.#claim = this.#db.transaction((c: IdempotencyClaim): ClaimedBody => {
      const inserted = this.#insert.run(
        c.organizationId,
        c.method,
        c.idempotencyKey,
        Buffer.from(c.requestHash),
        c.activityName,
        Buffer.from(c.body),
        Date.now(),
      );
      if (inserted.changes === 1) return { activityName: c.activityName, body: c.body, replayed: false };
      const row = this.#select.get(c.organizationId, c.method, c.idempotencyKey);
      if (row === undefined)
        throw new CountersignError('INTERNAL', 'idempotency row vanished inside its transaction');
      if (!equalBytes(new Uint8Array(row.request_hash), c.requestHash)) {
        throw new CountersignError(
          'IDEMPOTENCY_KEY_CONFLICT',
          'idempotency_key: was already used for a different request',
          { field: 'idempotency_key' },
        );
      }
      return { activityName: row.activity_name, body: new Uint8Array(row.body), replayed: true };
    });
    const update = this.#db.prepare<[Buffer, string, string, string, Buffer]>(
      `UPDATE idempotency_keys SET body = ?
        WHERE organization_id = ? AND method = ? AND idempotency_key = ? AND body = ?`,
    );
    this.#refresh = this.#db.transaction((k, stale: Uint8Array, fresh: Uint8Array): Uint8Array => {
      update.run(Buffer.from(fresh), k.organizationId, k.method, k.idempotencyKey, Buffer.from(stale));
      const row = this.#select.get(k.organizationId, k.method, k.idempotencyKey);
      if (row === undefined)
        throw new CountersignError('INTERNAL', 'idempotency row vanished inside its transaction');
      return new Uint8Array(row.body);
    });
  }

  /**
   * Replaces a recorded body that the service refused as stale (so it never ran) with a freshly
   * built one, unless a concurrent retry already did; returns the body now recorded.
   */
  async refresh(
    key: Pick<IdempotencyClaim, 'organizationId' | 'method' | 'idempotencyKey'>,
    stale: Uint8Array,
    fresh: Uint8Array,
  ): Promise<Uint8Array> {
    const body = await this.#locked(() => this.#refresh.immediate(key, stale, fresh));
    this.#sync.committed();
    await this.#sync.durable();
    return body;
  }

  /**
   * Records `body` under the key, or returns the body recorded by an earlier identical request;
   * resolves once what it returns is on disk (a body another request recorded included).
   */
  async claim(c: IdempotencyClaim): Promise<ClaimedBody> {
    const claimed = await this.#locked(() => this.#claim.immediate(c));
    if (!claimed.replayed) this.#sync.committed();
    await this.#sync.durable();
    return claimed;
  }

  async close(): Promise<void> {
    await this.#checkpointer?.stop();
    this.#db.close();
    this.#sync.close();
  }
}
