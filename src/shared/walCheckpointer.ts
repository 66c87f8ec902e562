/**
 * Checkpoints of a SQLite database in WAL mode on a thread of their own, so that no commit on the
 * writer's thread pays for one (SQLite's automatic checkpoint runs inside the commit that passes
 * 1,000 pages: a copy of the WAL and an fsync of the database file, 2–3 ms on an idle disk and far
 * more under load, on the thread that serves the requests).
 *
 * The thread runs PASSIVE checkpoints, which copy the WAL into the database file without blocking
 * writers. Under a steady stream of commits a PASSIVE checkpoint never finds the WAL fully copied
 * when a writer begins, so the writer never starts the WAL over and the file grows without end (14
 * MB/s at 64 signing calls in flight). Once the WAL holds more than `restartBytes`, a RESTART
 * checkpoint lets the next commit start it over.
 *
 * That commit pays for starting over: SQLite writes a new WAL header and fsyncs it before any frame
 * follows, and truncates the file to journal_size_limit. Made by the writer, it held the thread
 * that serves requests for 3–9 ms once a second at 1,800 calls a second. So this thread makes it
 * itself, right after its RESTART: a transaction that writes `application_id` back unchanged (one
 * page). Other connections then see a change they did not make, so their page caches and the
 * service's read cache (`data_version`) start afresh once per restart. Should the writer get in
 * first, it starts the WAL over as before.
 *
 * journal_size_limit is twice `restartBytes`. Under a steady load the WAL then keeps its
 * high-water mark (`restartBytes` and what one interval writes), and its commits overwrite blocks
 * the file already has. Cut back to `restartBytes`, the file's tail was allocated again every
 * second, and an fdatasync that must commit new blocks waits for ext4's journal. After a burst
 * (a reader that held the WAL), the file is cut back to the limit.
 *
 * A RESTART holds the writer out while it copies the last frames and syncs the database file, and
 * SQLite syncs that file only after a checkpoint that copied the whole WAL: every page the passive
 * checkpoints wrote since the last RESTART was still to be flushed inside it (6–13 ms under load,
 * once a second at 1,600 calls a second). So those pages are fdatasync'ed first, with the writer
 * running, and the RESTART is left the last few (1–2 ms). It never waits holding the writer's lock
 * (busy timeout 0): when the writer or a reader is in the way it tries again shortly, and at the
 * next turn after a few tries.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

const BETTER_SQLITE3 = createRequire(import.meta.url).resolve('better-sqlite3');

const PROGRAM = `
const { workerData, parentPort } = require('node:worker_threads');
const { closeSync, fdatasyncSync, openSync } = require('node:fs');
const Database = require(workerData.module);
const db = new Database(workerData.path);
db.pragma('synchronous = FULL');
const pageSize = db.pragma('page_size', { simple: true });
db.pragma('busy_timeout = 0');
db.pragma('journal_size_limit = ' + workerData.sizeLimit);
const file = openSync(workerData.path, 'r');
const pause = new Int32Array(new SharedArrayBuffer(4));
const begin = db.prepare('BEGIN IMMEDIATE');
const commit = db.prepare('COMMIT');
const rollback = db.prepare('ROLLBACK');
const applicationId = db.prepare('PRAGMA application_id').pluck();
// The first commit after a RESTART starts the WAL over (header, its fsync, the truncation).
const startOver = () => {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      begin.run();
    } catch {
      Atomics.wait(pause, 0, 0, 0.5);
      continue;
    }
    try {
      db.pragma('application_id = ' + Number(applicationId.get()));
      commit.run();
    } finally {
      if (db.inTransaction) rollback.run();
    }
    return;
  }
};
const checkpoint = () => {
  try {
    const [passive] = db.pragma('wal_checkpoint(PASSIVE)');
    if (passive === undefined || passive.log * pageSize <= workerData.restartBytes) return;
    fdatasyncSync(file);
    for (let attempt = 0; attempt < 20; attempt++) {
      const [restart] = db.pragma('wal_checkpoint(RESTART)');
      if (restart === undefined) return;
      if (restart.busy === 0) return startOver();
      Atomics.wait(pause, 0, 0, 0.5);
    }
  } catch {}
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on('message', () => { clearInterval(timer); closeSync(file); db.close(); parentPort.close(); });
`;

export interface WalCheckpointerOptions {
  /** How often the thread checkpoints (default 250 ms). */
  readonly intervalMs?: number | undefined;
  /** The WAL size past which it is started over (default 64 MiB); the file is cut back to twice it. */
  readonly restartBytes?: number | undefined;
}

export interface WalCheckpointer {
  /** Stops the thread (its connection closed) once any checkpoint it is running has ended. */
  stop(): Promise<void>;
}

/**
 * Turns off `db`'s automatic checkpoints and starts the thread that checkpoints the file at `path`
 * instead; undefined for an in-memory database, which has no WAL. Should the thread fail, `db`
 * checkpoints automatically again, as SQLite does by default.
 */
export function startWalCheckpointer(
  db: Database.Database,
  path: string,
  options: WalCheckpointerOptions = {},
): WalCheckpointer | undefined {
  if (path === ':memory:') return undefined;
  const restartBytes = options.restartBytes ?? 64 * 1024 * 1024;
  const sizeLimit = 2 * restartBytes;
  db.pragma('wal_autocheckpoint = 0');
  db.pragma(`journal_size_limit = ${sizeLimit}`);
  const worker = new Worker(PROGRAM, {
    eval: true,
    workerData: {
      module: BETTER_SQLITE3,
      path,
      intervalMs: options.intervalMs ?? 250,
      restartBytes,
      sizeLimit,
    },
  });
  // Unref'd while running, so it never keeps a process alive; held while it is being stopped.
  worker.unref();
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  worker.once('error', () => {
    if (db.open) db.pragma('wal_autocheckpoint = 1000');
  });
  return {
    async stop() {
      if (!exited) {
        worker.ref();
        worker.postMessage('stop');
      }
      await exit;
    },
  };
}

/** Whether `e` is SQLite's SQLITE_BUSY (or one of its extended codes). */
function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/**
 * For connections on a thread that serves requests: sets their busy timeout to 0, and answers the
 * function to run their statements through. It runs `fn` (a statement), and when that finds a lock
 * taken runs it again after a 1 ms timer, until `busyTimeoutMs` has passed; then it fails with
 * SQLITE_BUSY, as a busy timeout would have.
 *
 * The checkpointer's RESTART holds the write lock for a millisecond or two. While it does, SQLite's
 * busy handler would sleep on the calling thread in steps of 1, 2, 5, 10 ms and more, and stall
 * every request that thread runs: 12–25 ms once a second under load. With the retry, the thread
 * goes on with other work meanwhile. A statement that finds nothing locked runs at once, with no
 * timer and no promise.
 *
 * The busy timeout is not switched off around each statement instead: SQLite applies `PRAGMA
 * busy_timeout` when the statement is prepared, and two `db.pragma` calls per batch cost a lone
 * call ~3% of its latency (measured interleaved). `fn` must change nothing when it fails (a
 * statement or a transaction that rolls back).
 */
export function busyRetrier(
  busyTimeoutMs: number,
  ...connections: Database.Database[]
): <T>(fn: () => T) => T | Promise<T> {
  for (const db of connections) db.pragma('busy_timeout = 0');
  const again = async <T>(fn: () => T): Promise<T> => {
    const deadline = performance.now() + busyTimeoutMs;
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      try {
        return fn();
      } catch (e) {
        if (!isBusy(e) || performance.now() >= deadline) throw e;
      }
    }
  };
  return <T>(fn: () => T): T | Promise<T> => {
    try {
      return fn();
    } catch (e) {
      if (!isBusy(e)) throw e;
      return again(fn);
    }
  };
}
