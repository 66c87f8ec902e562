/**
 * The one seam between the store's SQL and an engine: a connection that prepares statements whose
 * `get`, `all` and `run` answer asynchronously. The store's modules are written once against it and
 * run unchanged on SQLite (better-sqlite3, synchronous underneath) and PostgreSQL (`pg`, a pool).
 * Statements use `?` placeholders; the PostgreSQL connection numbers them.
 */
import type Database from 'better-sqlite3';

export type Row = Record<string, unknown>;

export interface Stmt {
  get(...params: unknown[]): Promise<Row | undefined>;
  all(...params: unknown[]): Promise<Row[]>;
  /** `changes`: rows inserted, updated or deleted. */
  run(...params: unknown[]): Promise<{ changes: number }>;
}

export type Dialect = 'sqlite' | 'postgres';

export interface Conn {
  readonly dialect: Dialect;
  prepare(sql: string): Stmt;
}

/**
 * `column IN (…the list…)` for a list bound as one JSON array parameter: SQLite reads it with
 * `json_each`, PostgreSQL with `jsonb_array_elements_text`.
 */
export function inJsonList(conn: Conn, column: string): string {
  return conn.dialect === 'sqlite'
    ? `${column} IN (SELECT value FROM json_each(?))`
    : `${column} IN (SELECT jsonb_array_elements_text(?::jsonb))`;
}

/** The engine's spelling of "insert, or do nothing if the key exists". Both accept ON CONFLICT. */

export const str = (v: unknown): string => v as string;
/** Integers: SQLite answers numbers, PostgreSQL's BIGINT answers strings. */
export const num = (v: unknown): number => Number(v);
export const nnum = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
export const big = (v: unknown): bigint => BigInt(v as string | number | bigint);
export const nbig = (v: unknown): bigint | null =>
  v === null || v === undefined ? null : BigInt(v as string | number | bigint);
export const bytes = (v: unknown): Uint8Array => new Uint8Array(v as Buffer);
export const nbytes = (v: unknown): Uint8Array | null =>
  v === null || v === undefined ? null : new Uint8Array(v as Buffer);
export const nstr = (v: unknown): string | null => (v === null || v === undefined ? null : (v as string));
export const bool = (v: unknown): boolean => Number(v) === 1;
/** Booleans are stored as 0/1 integers on both engines. */
export const b = (v: boolean): number => (v ? 1 : 0);

/**
 * A SQLite connection whose statements come from `statementOf(sql)`: a function that answers the
 * better-sqlite3 statement to run each time (prepared once, on first use). `runner`, if given,
 * runs each statement (e.g. again later when it finds a lock taken).
 */
export function sqliteConnOf(
  statementOf: (sql: string) => () => Database.Statement,
  runner?: <T>(run: () => T) => T | Promise<T>,
): Conn {
  return {
    dialect: 'sqlite',
    prepare(sql) {
      const stmt = statementOf(sql);
      if (runner !== undefined)
        return {
          get: async (...a) => (await runner(() => stmt().get(...a))) as Row | undefined,
          all: async (...a) => (await runner(() => stmt().all(...a))) as Row[],
          run: async (...a) => ({ changes: (await runner(() => stmt().run(...a))).changes }),
        };
      return {
        get: async (...a) => stmt().get(...a) as Row | undefined,
        all: async (...a) => stmt().all(...a) as Row[],
        run: async (...a) => ({ changes: stmt().run(...a).changes }),
      };
    },
  };
}

/** A connection over one better-sqlite3 database; statements are prepared once, on first use. */
export function sqliteConn(db: Database.Database): Conn {
  return sqliteConnOf((sql) => {
    let st: Database.Statement | undefined;
    return () => (st ??= db.prepare(sql));
  });
}
