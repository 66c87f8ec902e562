/**
 * Durability of SQLite commits, paid off the JavaScript thread.
 *
 * A connection in WAL mode with synchronous=NORMAL commits by writing its frames to the WAL file
 * (in the page cache: a commit survives `kill -9`, not yet a power loss). This class then
 * fdatasyncs the WAL file on libuv's thread pool: once an fdatasync that began after a commit has
 * returned, that commit is as durable as synchronous=FULL would have made it. It holds because
 * SQLite with synchronous=NORMAL syncs the WAL before every checkpoint and the database file after
 * it, so a commit is always either in the WAL file or in an already synced database file. One
 * fdatasync covers every commit made before it began, so commits made while one runs share the next.
 * An owner may have a wait synced on its own thread instead, when nothing else waits for that
 * thread (a lone request: the pool's round trip, two thread wake-ups, costs it more than the sync).
 */
import { closeSync, fdatasync, fdatasyncSync, openSync } from 'node:fs';

interface Waiter {
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
}

export class WalSync {
  readonly #fd: number | undefined;
  readonly #observe: ((began: bigint) => void) | undefined;
  readonly #inline: (() => boolean) | undefined;
  /** The waiters the running fdatasync covers; undefined when none runs. */
  #inFlight: Waiter[] | undefined;
  /** Waiters for the next fdatasync (their commits came after the running one began). */
  #next: Waiter[] = [];
  /**
   * Commits since the last fdatasync began. It starts at one: what an earlier process committed
   * before it was killed may still be only in the page cache, and the first wait syncs it too.
   */
  #unsynced = 1;
  #failed: unknown;
  #closed = false;

  /**
   * `databasePath`: the SQLite file (its `-wal` beside it must exist: open the database in WAL
   * mode first); `:memory:` has nothing to sync. `observe` is told the start of each fdatasync as it ends.
   * `inline`, asked when a wait needs an fdatasync and none runs: true to make it on this thread
   * instead of the pool (when no other work is waiting for the thread, the pool's two thread
   * wake-ups cost the waiter more than the fdatasync itself).
   */
  constructor(databasePath: string, observe?: (began: bigint) => void, inline?: () => boolean) {
    this.#fd = databasePath === ':memory:' ? undefined : openSync(`${databasePath}-wal`, 'r');
    this.#observe = observe;
    this.#inline = inline;
  }

  /** Whether there is a file to sync (false for an in-memory database, which keeps FULL). */
  get enabled(): boolean {
    return this.#fd !== undefined;
  }

  /** An fdatasync failed: what is on disk is unknown, so nothing may be acknowledged again. */
  get failed(): unknown {
    return this.#failed;
  }

  /** Call right after each COMMIT. */
  committed(): void {
    this.#unsynced++;
  }

  /** Resolves once every commit made before the call is on disk; rejects if an fdatasync failed. */
  durable(): Promise<void> {
    if (this.#failed !== undefined) return Promise.reject(this.#failed);
    if (this.#fd === undefined) return Promise.resolve();
    if (this.#unsynced === 0) {
      // Every commit so far is on disk, or covered by the fdatasync running now.
      const running = this.#inFlight;
      if (running === undefined) return Promise.resolve();
      return new Promise<void>((resolve, reject) => running.push({ resolve, reject }));
    }
    if (this.#inFlight === undefined && !this.#closed && this.#inline?.() === true)
      return this.#syncHere(this.#fd);
    return new Promise<void>((resolve, reject) => {
      this.#next.push({ resolve, reject });
      this.#pump();
    });
  }

  /** An fdatasync on the calling thread; only when none runs on the pool (so none waits for one). */
  #syncHere(fd: number): Promise<void> {
    this.#unsynced = 0;
    const began = process.hrtime.bigint();
    try {
      fdatasyncSync(fd);
    } catch (e) {
      this.#failed ??= e;
    }
    this.#observe?.(began);
    return this.#failed === undefined ? Promise.resolve() : Promise.reject(this.#failed);
  }

  /**
   * Closes the WAL's descriptor; an fdatasync still running keeps it until it returns (its waiters
   * are answered), and no other starts.
   */
  close(): void {
    this.#closed = true;
    if (this.#fd !== undefined && this.#inFlight === undefined) closeSync(this.#fd);
  }

  #pump(): void {
    const fd = this.#fd;
    if (this.#inFlight !== undefined || this.#next.length === 0 || fd === undefined) return;
    if (this.#closed) {
      const waiting = this.#next;
      this.#next = [];
      for (const w of waiting) w.reject(new Error('the database is closed'));
      return;
    }
    const covered = this.#next;
    this.#inFlight = covered;
    this.#next = [];
    this.#unsynced = 0;
    const began = process.hrtime.bigint();
    fdatasync(fd, (err) => {
      this.#inFlight = undefined;
      if (this.#closed) closeSync(fd);
      this.#observe?.(began);
      if (err !== null) this.#failed ??= err;
      for (const w of covered) {
        if (this.#failed === undefined) w.resolve();
        else w.reject(this.#failed);
      }
      this.#pump();
    });
  }
}
