/** Data files only the service's user may read: SQLite databases and their WAL and shared-memory files. */
import { chmodSync, closeSync, existsSync, openSync } from 'node:fs';

/**
 * Creates `path` with mode 0600 if it does not exist, and narrows it (and SQLite's `-wal`, `-shm`,
 * `-journal` beside it) to 0600 if it does. SQLite gives the files it creates later the mode of
 * the database file, so creating that one 0600 first is what keeps them private.
 */
export function ensurePrivateDatabaseFile(path: string): void {
  if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600));
  for (const p of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`])
    if (existsSync(p)) chmodSync(p, 0o600);
}
