/**
 * The embedded store: SQLite through better-sqlite3 in WAL mode; a write whose promise resolved
 * survives `kill -9` and power loss. Writes are group-committed: every write queued during one
 * turn of the event loop runs in a single transaction (each in its own savepoint, so one failing
 * write does not undo the others).
 *
 * The fsync does not run on this thread: the writer commits with synchronous=NORMAL and the WAL
 * is fdatasync'ed on libuv's thread pool (../../shared/walSync.ts); a write's promise resolves
 * once an fdatasync that began after its commit has returned, which is synchronous=FULL's
 * guarantee without blocking the thread that runs the requests (`syncInline` may have a wait
 * synced on this thread when no other request waits for it).
 */
import Database from 'better-sqlite3';
import { ensurePrivateDatabaseFile } from '../../shared/privateFile.js';
import { WalSync } from '../../shared/walSync.js';
import { busyRetrier, startWalCheckpointer } from '../../shared/walCheckpointer.js';
import { MIGRATIONS } from './schema.js';
import { observeStoreSync, observeStoreWrite } from '../../observability/metrics.js'; // --- operability ---
import { sqliteConn, sqliteConnOf, type Conn } from './conn.js';
import type { Store, StoreTx, WriteOptions } from './types.js';
import { storeParts } from './sql/parts.js';

interface QueuedWrite {
  fn: (tx: StoreTx) => Promise<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  /** Resolve only once the commit is on disk (false: once it is committed). */
  durable: boolean;
  /** The write may run again (WriteOptions.rerunnable). */
  rerunnable: boolean;
}

/**
 * At most this many writes share one commit. A commit writes each page its writes changed to the
 * WAL once (two pwrites a page) and the checkpointer copies it once, whatever the number of writes
 * on that page, so fuller batches write fewer pages per activity. At 64 SignTransaction calls in
 * flight a cap of 8 was reached by most batches (6.8 writes a batch on average); with 32 they hold
 * ~14, and the process makes ~13 pwrites per call instead of ~19 (perf stat, two runs each). A
 * lone request is not held back: a batch takes what is queued when the writer is free.
 */
const MAX_BATCH = 32;

export interface SqliteStoreOptions {
  /** Checkpoint the WAL from a background thread instead of inside commits (default true). */
  readonly backgroundCheckpoint?: boolean;
  /** How often the background thread checkpoints (default 250 ms). */
  readonly checkpointIntervalMs?: number;
  /** The WAL size past which it is started over (default 64 MiB); the file is cut back to twice it. */
  readonly walRestartBytes?: number;
  /** How long a statement waits for another connection's lock before it fails (default 5 s). */
  readonly busyTimeoutMs?: number;
  /**
   * Asked when a durable write needs an fdatasync and none runs: true to make it on the store's
   * thread rather than on libuv's pool (see WalSync). Default: always the pool.
   */
  readonly syncInline?: () => boolean;
}

/** Opens (creating and migrating if needed) the SQLite store at `path`. */
export function openSqliteStore(path: string, options: SqliteStoreOptions = {}): Store {
  if (path !== ':memory:') ensurePrivateDatabaseFile(path);
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  // A batch runs each write in a savepoint; SQLite copies every page a savepoint first changes to a
  // sub-journal, which past 64 KiB spills to a temporary file (open, pwrite, unlink per batch).
  // temp_store = MEMORY keeps it in memory; it holds only pages of the batch in flight.
  db.pragma('temp_store = MEMORY');
  migrate(db);
  // From here the WAL is synced off this thread after each commit (see the head of the file). An
  // in-memory database has no file to sync and keeps FULL (which is a no-op there).
  const sync = new WalSync(path, observeStoreSync, options.syncInline); // --- operability --- (observeStoreSync)
  if (sync.enabled) db.pragma('synchronous = NORMAL');
  const checkpointer =
    (options.backgroundCheckpoint ?? true)
      ? startWalCheckpointer(db, path, {
          intervalMs: options.checkpointIntervalMs,
          restartBytes: options.walRestartBytes,
        })
      : undefined;

  const conn = sqliteConn(db);
  const parts = storeParts(conn);
  // Reads outside a write see the last committed state, never the rows of a batch that is still
  // open (and may yet roll back) on the writer: see readConn.
  const readDb = new Database(path, { readonly: true, fileMustExist: true });
  // From here a statement that finds a lock taken (the checkpointer restarting the WAL) is run
  // again after a timer instead of sleeping on this thread (see busyRetrier).
  const onBusy = busyRetrier(busyTimeoutMs, db, readDb);
  const readParts = storeParts(readConn(db, readDb, onBusy));
  const tx = parts.tx;
  let queue: QueuedWrite[] = [];
  let scheduled = false;
  let closed = false;
  /** The batch being committed; writes queued meanwhile wait for the next one. */
  let running: Promise<void> = Promise.resolve();
  let exclusiveTail: Promise<void> = Promise.resolve();

  // Transaction control, prepared once (db.exec would parse each statement on every batch).
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  const savepoint = db.prepare('SAVEPOINT w');
  const release = db.prepare('RELEASE w');
  const rollbackTo = db.prepare('ROLLBACK TO w');
  // Read once per turn of the event loop by the read cache (db.pragma would prepare it each time).
  const dataVersion = db.prepare('PRAGMA data_version').pluck();

  /** BEGIN IMMEDIATE; a promise only when it found the write lock taken and waits for it. */
  const beginWrite = (): Promise<unknown> | undefined => {
    const begun = onBusy(() => begin.run());
    return begun instanceof Promise ? begun : undefined;
  };

  type Outcome = { ok: boolean; value: unknown };

  // Each write in its own savepoint (awaited in turn: a write's statements answer at once on
  // SQLite, so a batch holds the writer only for the microtasks of its closures): a write that
  // fails is undone alone. A batch of one write needs none: if it fails, the transaction rolls back.
  const runIsolated = async (batch: QueuedWrite[]): Promise<Outcome[]> => {
    const outcomes: Outcome[] = [];
    const alone = batch.length === 1;
    const waiting = beginWrite();
    if (waiting !== undefined) await waiting;
    for (const w of batch) {
      if (!alone) savepoint.run();
      try {
        outcomes.push({ ok: true, value: await w.fn(tx) });
        if (!alone) release.run();
      } catch (e) {
        if (alone) rollback.run();
        else {
          rollbackTo.run();
          release.run();
        }
        outcomes.push({ ok: false, value: e });
      }
    }
    return outcomes;
  };

  // Writes that may all run again share the transaction without a savepoint apiece (each costs a
  // SAVEPOINT, a RELEASE and a copy of every page it first changes). If one fails, the batch rolls
  // back whole and undefined says to run it again with savepoints.
  const runBare = async (batch: QueuedWrite[]): Promise<Outcome[] | undefined> => {
    const outcomes: Outcome[] = [];
    const waiting = beginWrite();
    if (waiting !== undefined) await waiting;
    for (const w of batch) {
      try {
        outcomes.push({ ok: true, value: await w.fn(tx) });
      } catch {
        if (db.inTransaction) rollback.run();
        return undefined;
      }
    }
    return outcomes;
  };

  // One batch at a time: BEGIN, the writes, COMMIT, then the writers' promises settle (the durable
  // ones once the WAL is synced).
  const runBatch = async (batch: QueuedWrite[]): Promise<void> => {
    let outcomes: Outcome[];
    const began = process.hrtime.bigint(); // --- operability ---
    try {
      const bare = batch.length > 1 && batch.every((w) => w.rerunnable);
      outcomes = (bare ? await runBare(batch) : undefined) ?? (await runIsolated(batch));
      const committing = process.hrtime.bigint(); // --- operability ---
      if (db.inTransaction) {
        const committed = onBusy(() => commit.run());
        if (committed instanceof Promise) await committed;
        sync.committed();
      }
      observeStoreWrite(began, committing); // --- operability ---
    } catch (e) {
      if (db.inTransaction) rollback.run();
      for (const w of batch) w.reject(e);
      return;
    }
    const settle = (w: QueuedWrite, i: number): void => {
      const o = outcomes[i] as Outcome;
      if (o.ok) w.resolve(o.value);
      else w.reject(o.value);
    };
    // Writes that asked only for the commit (and failed writes, which changed nothing) settle now;
    // the others when the WAL is on disk. The next batch does not wait for the fdatasync.
    const later: number[] = [];
    batch.forEach((w, i) => {
      if (w.durable && (outcomes[i] as Outcome).ok) later.push(i);
      else settle(w, i);
    });
    if (later.length > 0) {
      sync.durable().then(
        () => {
          for (const i of later) settle(batch[i] as QueuedWrite, i);
        },
        (e: unknown) => {
          for (const i of later) (batch[i] as QueuedWrite).reject(e);
        },
      );
    }
  };

  const flush = (): void => {
    scheduled = false;
    running = running.then(async () => {
      while (queue.length > 0) {
        const batch = queue.length <= MAX_BATCH ? queue : queue.slice(0, MAX_BATCH);
        queue = queue.length <= MAX_BATCH ? [] : queue.slice(MAX_BATCH);
        await runBatch(batch);
        // Let the settled writers' continuations (and new writes) run before the next batch.
        if (queue.length > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      }
    });
  };

  const store: Store = {
    ...readParts.read,
    // The writer's data_version moves when any other connection commits (never for its own
    // commits; the read connection only reads), so it names changes made outside this process.
    externalVersion: () => dataVersion.get() as number,
    engine: 'sqlite',
    exclusive: <T>(fn: () => Promise<T>): Promise<T> => {
      const run = exclusiveTail.then(fn);
      exclusiveTail = run.then(
        () => undefined,
        () => undefined,
      );
      return run;
    },
    write<T>(fn: (t: StoreTx) => Promise<T>, options?: WriteOptions): Promise<T> {
      if (closed) return Promise.reject(new Error('store is closed'));
      if (sync.failed !== undefined) return Promise.reject(sync.failed as Error);
      return new Promise<T>((resolve, reject) => {
        queue.push({
          fn,
          resolve: resolve as (v: unknown) => void,
          reject,
          durable: options?.durable ?? true,
          rerunnable: options?.rerunnable ?? false,
        });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    synced: () => sync.durable(),
    close: async () => {
      closed = true;
      flush();
      await running;
      await sync.durable().catch(() => undefined);
      await checkpointer?.stop();
      readDb.close();
      db.pragma(`busy_timeout = ${busyTimeoutMs}`);
      db.pragma('wal_checkpoint(TRUNCATE)');
      sync.close();
      db.close();
    },
  };
  return store;
}

/**
 * The connection reads outside a write run on. While a batch is open on the writer (between its
 * BEGIN and COMMIT, across the microtasks of its writes) they run on the read-only connection,
 * which WAL gives the last committed state. Otherwise they run on the writer itself, which then
 * holds no transaction and sees exactly that state too, and whose page cache is warm: a reader
 * connection drops its whole page cache at the start of every read after another connection has
 * committed, which under load is every read (each one then fetches the pages on its path again,
 * a pread apiece). A statement that could write is refused here, as the read-only connection
 * would refuse it.
 */
export function readConn(
  writer: Database.Database,
  reader: Database.Database,
  onBusy?: <T>(run: () => T) => T | Promise<T>,
): Conn {
  return sqliteConnOf((sql) => {
    let onWriter: Database.Statement | undefined;
    let onReader: Database.Statement | undefined;
    return () => {
      if (writer.inTransaction) return (onReader ??= reader.prepare(sql));
      if (onWriter === undefined) {
        const st = writer.prepare(sql);
        if (!st.readonly) throw new TypeError(`a read ran a statement that writes: ${sql.slice(0, 60)}`);
        onWriter = st;
      }
      return onWriter;
    };
  }, onBusy);
}

function migrate(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)');
  const done = new Set(
    (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map(
      (r) => r.version,
    ),
  );
  for (const m of MIGRATIONS) {
    if (done.has(m.version)) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version) VALUES (?)').run(m.version);
    })();
  }
}
