/**
 * A read-through cache in front of a Store for what every stamped request reads and rarely
 * changes: credentials (API key → user, the user's keys), organizations, users and tags, signing
 * keys with their wallet or private key, policies and contract ABIs.
 *
 * Invalidation, so a cached answer is never older than an acknowledged change:
 * - In this process: a write whose transaction calls any StoreTx method outside `UNCACHED_WRITES`
 *   (the activity records, sends, webhook and OTP rows no cached read returns) empties the cache
 *   when it settles, before its caller sees the result; a read that was running meanwhile does not
 *   fill the cache (the generation it started under has passed).
 * - Other processes and replicas: the store's `externalVersion()` (SQLite: `PRAGMA data_version` of
 *   the writer connection, which moves when another connection commits), compared once per turn
 *   of the event loop. A store that cannot tell cheaply (no `externalVersion`) is not cached: the
 *   PostgreSQL store answers from the database until it has a version row bumped in the
 *   transaction of every change (the hook is `externalVersion`).
 */
import type { Store, StoreTx, WriteOptions } from './types.js';

/**
 * StoreTx methods that change nothing a cached read returns. Everything else (including methods
 * added later) empties the cache, so forgetting to list one costs speed, never correctness.
 */
const UNCACHED_WRITES: ReadonlySet<string> = new Set([
  // activities, votes and their policy evaluations (never read through the cache)
  'insertActivity',
  'insertVote',
  'updateActivity',
  'insertPolicyEvaluation',
  // reservations and leases of several replicas (activity and send rows only)
  'reserveActivity',
  'leaseActivity',
  'releaseActivityLease',
  'lockActivity',
  'completeLeasedActivity',
  'abandonActivity',
  'expireActivityLeases',
  'claimPendingSendTransactions',
  'claimSendTransaction',
  'releaseSendClaims',
  // sends and nonces
  'allocateNonce',
  'nextNonce',
  'releaseNonce',
  'insertSendTransaction',
  'updateSendTransaction',
  // the webhook outbox
  'enqueueActivityEvent',
  'enqueueSendStatusEvent',
  'claimWebhookDeliveries',
  'recordWebhookAttempt',
  'claimWebhookLane',
  'releaseWebhookDeliveries',
  'releaseWebhookLeases',
  'redeliverWebhook',
  // OTPs
  'insertOtp',
  'countLiveOtps',
  'otpInTx',
  'updateOtpState',
  // reads inside a write
  'getPolicy',
  'getWallet',
  'getUser',
  'getPrivateKey',
  'getWalletAccount',
  'listApiKeysOfUser',
  'listUsersOfOrganization',
  'policyNameTaken',
  'walletNameTaken',
  'privateKeyNameTaken',
  'walletAccountExists',
]);

/** The reads served from the cache: each answers the same for the same arguments until a change. */
const CACHED_READS = [
  'getOrganization',
  'getUser',
  'listUsers',
  'listApiKeys',
  'findApiKeys',
  'findAuthenticators',
  'getWallet',
  'getPrivateKey',
  'resolveSigningKey',
  'listPolicies',
  'listUserTagIds',
  'listSmartContractInterfaces',
] as const satisfies readonly (keyof Store)[];

/** Entries per read before that read's map is emptied (a bound on memory, not a tuning knob). */
const MAX_ENTRIES = 10_000;

/**
 * The reads a caller reaches before it is authenticated, with keys it chose (a public key, a
 * credential id): their misses are not kept, so unknown keys cannot fill memory. The other reads
 * are keyed by ids of authenticated callers' own records, and an empty answer (a user without
 * tags, an organization without policies) is kept like any other.
 */
const UNAUTHENTICATED_READS: ReadonlySet<string> = new Set(['findApiKeys', 'findAuthenticators']);

/** Whether an answer is worth keeping: misses are not, nor empty lists of unauthenticated reads. */
const worthKeeping = (name: string, v: unknown): boolean =>
  v !== undefined && !(Array.isArray(v) && v.length === 0 && UNAUTHENTICATED_READS.has(name));

/**
 * One answer is shared by every request that reads it, so it is frozen (the record and, for a
 * list, the list and its records): a caller that sorted or edited it would throw, not corrupt
 * the next request's view.
 */
function frozen<T>(v: T): T {
  if (Array.isArray(v)) {
    for (const x of v) if (typeof x === 'object' && x !== null) Object.freeze(x);
  }
  return typeof v === 'object' && v !== null ? Object.freeze(v) : v;
}

/** Wraps `store` with the cache; returns it unchanged when it has no `externalVersion`. */
export function cachedStore(store: Store): Store {
  const externalVersion = store.externalVersion?.bind(store);
  if (externalVersion === undefined) return store;
  const maps = new Map<string, Map<string, Promise<unknown>>>(CACHED_READS.map((n) => [n, new Map()]));
  let generation = 0;
  /** Writes that changed (or may have changed) something cached and have not settled yet. */
  let dirtyWrites = 0;
  let seenVersion = externalVersion();
  let checkedThisTurn = false;

  const invalidate = (): void => {
    generation++;
    for (const m of maps.values()) m.clear();
  };
  /** Another connection's commits show at the first cached read of each event-loop turn. */
  const checkExternal = (): void => {
    if (checkedThisTurn) return;
    checkedThisTurn = true;
    setImmediate(() => (checkedThisTurn = false));
    const v = externalVersion();
    if (v !== seenVersion) {
      seenVersion = v;
      invalidate();
    }
  };

  const cached = { ...store } as Store & Record<string, unknown>;
  for (const name of CACHED_READS) {
    const read = (store[name] as (...a: unknown[]) => Promise<unknown>).bind(store);
    const map = maps.get(name) as Map<string, Promise<unknown>>;
    (cached as Record<string, unknown>)[name] = (...args: unknown[]): Promise<unknown> => {
      checkExternal();
      const key = JSON.stringify(args);
      const hit = map.get(key);
      if (hit !== undefined) return hit;
      const startedAt = generation;
      const p = read(...args).then(frozen);
      // Kept only if no change could have slipped between the read and now; shared while pending.
      if (dirtyWrites === 0) {
        if (map.size >= MAX_ENTRIES) map.clear();
        map.set(key, p);
        p.then(
          (v) => {
            if (generation !== startedAt || !worthKeeping(name, v)) {
              if (map.get(key) === p) map.delete(key);
            }
          },
          () => {
            if (map.get(key) === p) map.delete(key);
          },
        );
      }
      return p;
    };
  }

  cached.write = <T>(fn: (tx: StoreTx) => Promise<T>, options?: WriteOptions): Promise<T> => {
    let dirty = false;
    const settle = (): void => {
      if (!dirty) return;
      dirtyWrites--;
      invalidate();
    };
    const p = store.write((tx) => {
      const watched = new Proxy(tx, {
        get(target, prop, receiver) {
          const v = Reflect.get(target, prop, receiver) as unknown;
          if (typeof prop === 'string' && typeof v === 'function' && !UNCACHED_WRITES.has(prop) && !dirty) {
            dirty = true;
            dirtyWrites++;
            invalidate();
          }
          return v;
        },
      });
      return fn(watched);
    }, options);
    return p.then(
      (v) => {
        settle();
        return v;
      },
      (e: unknown) => {
        settle();
        throw e;
      },
    );
  };
  return cached;
}
