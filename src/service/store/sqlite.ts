/**
 * The embedded store: SQLite through better-sqlite3, WAL with synchronous=FULL, so a write whose
 * promise resolved survives `kill -9` and power loss. Writes are group-committed: every write
 * queued during one turn of the event loop runs in a single transaction (each in its own
 * savepoint, so one failing write does not undo the others) and one fsync covers them all.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { MIGRATIONS } from './schema.js';
import type {
  ActivityRecord,
  ActivityStatus,
  ApiKeyCurve,
  ApiKeyRecord,
  AuthenticatorRecord,
  OrganizationRecord,
  PolicyEffectValue,
  PolicyEvaluationRecord,
  PolicyRecord,
  PrivateKeyRecord,
  ServiceKeyRecord,
  SigningKeyRecord,
  Store,
  StoreTx,
  UserRecord,
  VoteRecord,
  WalletAccountRecord,
  WalletRecord,
} from './types.js';

type Row = Record<string, unknown>;

interface QueuedWrite {
  fn: (tx: StoreTx) => unknown;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

const str = (v: unknown): string => v as string;
const num = (v: unknown): number => Number(v);
const bytes = (v: unknown): Uint8Array => new Uint8Array(v as Buffer);
const nstr = (v: unknown): string | null => (v === null || v === undefined ? null : (v as string));

function toOrg(r: Row): OrganizationRecord {
  return {
    id: str(r.id),
    name: str(r.name),
    parentId: nstr(r.parent_id),
    rootQuorumThreshold: num(r.root_quorum_threshold),
    createdAtMs: num(r.created_at_ms),
  };
}

function toUser(r: Row): UserRecord {
  return {
    id: str(r.id),
    organizationId: str(r.organization_id),
    name: str(r.name),
    email: nstr(r.email),
    phoneNumber: nstr(r.phone_number),
    isRoot: num(r.is_root) === 1,
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  };
}

function toApiKey(r: Row): ApiKeyRecord {
  return {
    id: str(r.id),
    userId: str(r.user_id),
    organizationId: str(r.organization_id),
    name: str(r.name),
    publicKey: str(r.public_key),
    curve: str(r.curve) as ApiKeyCurve,
    expiresAtMs: r.expires_at_ms === null ? null : num(r.expires_at_ms),
    createdAtMs: num(r.created_at_ms),
  };
}

function toAuthenticator(r: Row): AuthenticatorRecord {
  return {
    id: str(r.id),
    userId: str(r.user_id),
    organizationId: str(r.organization_id),
    name: str(r.name),
    credentialId: str(r.credential_id),
    publicKey: str(r.public_key),
    createdAtMs: num(r.created_at_ms),
  };
}

function toWallet(r: Row): WalletRecord {
  return {
    id: str(r.id),
    organizationId: str(r.organization_id),
    name: str(r.name),
    sealedMnemonic: bytes(r.sealed_mnemonic),
    exported: num(r.exported) === 1,
    imported: num(r.imported) === 1,
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  };
}

function toAccount(r: Row): WalletAccountRecord {
  return {
    id: str(r.id),
    organizationId: str(r.organization_id),
    walletId: str(r.wallet_id),
    curve: str(r.curve),
    pathFormat: 'PATH_FORMAT_BIP32',
    path: str(r.path),
    addressFormat: str(r.address_format),
    address: str(r.address),
    publicKey: str(r.public_key),
    sealedKey: bytes(r.sealed_key),
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  };
}

function toServiceKey(r: Row): ServiceKeyRecord {
  return {
    id: str(r.id),
    publicKey: str(r.public_key),
    sealedKey: bytes(r.sealed_key),
    createdAtMs: num(r.created_at_ms),
  };
}

function toActivity(r: Row): ActivityRecord {
  return {
    id: str(r.id),
    organizationId: str(r.organization_id),
    type: str(r.type),
    status: str(r.status) as ActivityStatus,
    fingerprint: str(r.fingerprint),
    intentKey: str(r.intent_key),
    intentJson: str(r.intent_json),
    resultKey: str(r.result_key),
    resultJson: nstr(r.result_json),
    failureJson: nstr(r.failure_json),
    timestampMs: str(r.timestamp_ms),
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  };
}

function toVote(r: Row): VoteRecord {
  return {
    id: str(r.id),
    activityId: str(r.activity_id),
    userId: str(r.user_id),
    selection: str(r.selection) as VoteRecord['selection'],
    message: str(r.message),
    publicKey: str(r.public_key),
    signature: str(r.signature),
    scheme: str(r.scheme),
    createdAtMs: num(r.created_at_ms),
  };
}

function toPolicy(r: Row): PolicyRecord {
  return {
    id: str(r.id),
    organizationId: str(r.organization_id),
    name: str(r.name),
    effect: str(r.effect) as PolicyEffectValue,
    condition: nstr(r.condition_src),
    consensus: nstr(r.consensus_src),
    time: nstr(r.time_src),
    notes: str(r.notes),
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  };
}

function toPolicyEvaluation(r: Row): PolicyEvaluationRecord {
  return {
    id: str(r.id),
    activityId: str(r.activity_id),
    organizationId: str(r.organization_id),
    voteId: nstr(r.vote_id),
    outcome: str(r.outcome),
    resultsJson: str(r.results_json),
    createdAtMs: num(r.created_at_ms),
  };
}

const b = (v: boolean): number => (v ? 1 : 0);

/**
 * At most this many writes share one commit. Larger batches save fsyncs but release their
 * responses all at once, which makes the daemon and the service take turns instead of overlapping;
 * 8 measured best on the 2-core reference machine (bench/run.ts).
 */
const MAX_BATCH = 8;

const BETTER_SQLITE3 = createRequire(import.meta.url).resolve('better-sqlite3');

// Runs on its own thread with its own connection: PASSIVE checkpoints copy the WAL into the
// database file without blocking writers, so no commit ever pays for a checkpoint.
const CHECKPOINTER = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.path);
db.pragma('synchronous = FULL');
db.pragma('busy_timeout = 5000');
const timer = setInterval(() => { try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {} }, workerData.intervalMs);
parentPort.on('message', () => { clearInterval(timer); db.close(); parentPort.close(); });
`;

export interface SqliteStoreOptions {
  /** Checkpoint the WAL from a background thread instead of inside commits (default true). */
  readonly backgroundCheckpoint?: boolean;
}

/** Opens (creating and migrating if needed) the SQLite store at `path`. */
export function openSqliteStore(path: string, options: SqliteStoreOptions = {}): Store {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  // FULL: the WAL is fsynced at every commit, so an acknowledged write survives power loss too.
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db);
  let checkpointer: Worker | undefined;
  if (options.backgroundCheckpoint ?? true) {
    db.pragma('wal_autocheckpoint = 0');
    checkpointer = new Worker(CHECKPOINTER, {
      eval: true,
      workerData: { module: BETTER_SQLITE3, path, intervalMs: 250 },
    });
    checkpointer.unref();
  }

  const q = <T = Row>(sql: string) => {
    const st = db.prepare(sql);
    return {
      get: (...a: unknown[]) => st.get(...a) as T | undefined,
      all: (...a: unknown[]) => st.all(...a) as T[],
      run: (...a: unknown[]) => st.run(...a),
    };
  };

  const s = {
    insOrg: q(
      'INSERT INTO organizations (id, name, parent_id, root_quorum_threshold, created_at_ms) VALUES (?,?,?,?,?)',
    ),
    insUser: q(
      'INSERT INTO users (id, organization_id, name, email, phone_number, is_root, created_at_ms, updated_at_ms) VALUES (?,?,?,?,?,?,?,?)',
    ),
    insApiKey: q(
      'INSERT INTO api_keys (id, user_id, organization_id, name, public_key, curve, expires_at_ms, created_at_ms) VALUES (?,?,?,?,?,?,?,?)',
    ),
    insAuth: q(
      'INSERT INTO authenticators (id, user_id, organization_id, name, credential_id, public_key, created_at_ms) VALUES (?,?,?,?,?,?,?)',
    ),
    insWallet: q(
      'INSERT INTO wallets (id, organization_id, name, sealed_mnemonic, exported, imported, created_at_ms, updated_at_ms) VALUES (?,?,?,?,?,?,?,?)',
    ),
    insAccount: q(
      `INSERT INTO wallet_accounts (id, organization_id, wallet_id, curve, path_format, path, address_format, address, address_lc, public_key, sealed_key, created_at_ms, updated_at_ms)
       VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
    ),
    insKey: q(
      `INSERT INTO private_keys (id, organization_id, name, curve, public_key, sealed_key, tags_json, exported, imported, created_at_ms, updated_at_ms)
       VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
    ),
    insKeyAddr: q(
      'INSERT INTO private_key_addresses (private_key_id, organization_id, format, address, address_lc, position) VALUES (?,?,?,?,?,?)',
    ),
    insActivity: q(
      `INSERT INTO activities (id, organization_id, type, status, fingerprint, intent_key, intent_json, result_key, result_json, failure_json, timestamp_ms, created_at_ms, updated_at_ms)
       VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
    ),
    insVote: q(
      'INSERT INTO votes (id, activity_id, user_id, selection, message, public_key, signature, scheme, created_at_ms) VALUES (?,?,?,?,?,?,?,?,?)',
    ),
    updActivity: q(
      'UPDATE activities SET status = ?, result_json = ?, failure_json = ?, updated_at_ms = ? WHERE id = ? AND status = ?',
    ),
    insPolicy: q(
      `INSERT INTO policies (id, organization_id, name, effect, condition_src, consensus_src, time_src, notes, created_at_ms, updated_at_ms)
       VALUES (?,?,?,?,?,?,?,?,?,?)`,
    ),
    updPolicy: q(
      `UPDATE policies SET name = ?, effect = ?, condition_src = ?, consensus_src = ?, time_src = ?, notes = ?, updated_at_ms = ?
       WHERE organization_id = ? AND id = ?`,
    ),
    delPolicy: q('DELETE FROM policies WHERE organization_id = ? AND id = ?'),
    policy: q('SELECT * FROM policies WHERE organization_id = ? AND id = ?'),
    policies: q('SELECT * FROM policies WHERE organization_id = ? ORDER BY created_at_ms, id'),
    policyName: q('SELECT 1 FROM policies WHERE organization_id = ? AND name = ? AND id <> ?'),
    insEvaluation: q(
      `INSERT INTO policy_evaluations (id, activity_id, organization_id, vote_id, outcome, results_json, created_at_ms)
       VALUES (?,?,?,?,?,?,?)`,
    ),
    evaluations: q('SELECT * FROM policy_evaluations WHERE activity_id = ? ORDER BY created_at_ms, id'),
    walletName: q('SELECT 1 FROM wallets WHERE organization_id = ? AND name = ?'),
    keyName: q('SELECT 1 FROM private_keys WHERE organization_id = ? AND name = ?'),
    accountExists: q(
      'SELECT 1 FROM wallet_accounts WHERE wallet_id = ? AND curve = ? AND path = ? AND address_format = ?',
    ),
    org: q('SELECT * FROM organizations WHERE id = ?'),
    user: q('SELECT * FROM users WHERE id = ?'),
    users: q('SELECT * FROM users WHERE organization_id = ? ORDER BY created_at_ms, id'),
    apiKeysOfUser: q('SELECT * FROM api_keys WHERE user_id = ? ORDER BY created_at_ms, id'),
    apiKeysByPub: q('SELECT * FROM api_keys WHERE public_key = ?'),
    authsByCred: q('SELECT * FROM authenticators WHERE credential_id = ?'),
    wallet: q('SELECT * FROM wallets WHERE organization_id = ? AND id = ?'),
    wallets: q('SELECT * FROM wallets WHERE organization_id = ? ORDER BY created_at_ms, id'),
    accountByAddr: q(
      'SELECT * FROM wallet_accounts WHERE organization_id = ? AND wallet_id = ? AND address_lc = ?',
    ),
    accountByPath: q(
      'SELECT * FROM wallet_accounts WHERE organization_id = ? AND wallet_id = ? AND path = ? ORDER BY id',
    ),
    accountsAll: q('SELECT * FROM wallet_accounts WHERE organization_id = ? AND id > ? ORDER BY id LIMIT ?'),
    accountsOfWallet: q(
      'SELECT * FROM wallet_accounts WHERE organization_id = ? AND wallet_id = ? AND id > ? ORDER BY id LIMIT ?',
    ),
    key: q('SELECT * FROM private_keys WHERE organization_id = ? AND id = ?'),
    keys: q('SELECT * FROM private_keys WHERE organization_id = ? ORDER BY created_at_ms, id'),
    keyAddrs: q(
      'SELECT format, address FROM private_key_addresses WHERE private_key_id = ? ORDER BY position',
    ),
    keyByAddr: q(
      `SELECT k.*, a.format AS matched_format, a.address AS matched_address FROM private_key_addresses a
       JOIN private_keys k ON k.id = a.private_key_id WHERE a.organization_id = ? AND a.address_lc = ? LIMIT 1`,
    ),
    accountBySignAddr: q(
      'SELECT * FROM wallet_accounts WHERE organization_id = ? AND address_lc = ? ORDER BY id LIMIT 1',
    ),
    activity: q('SELECT * FROM activities WHERE organization_id = ? AND id = ?'),
    activityByFp: q('SELECT * FROM activities WHERE fingerprint = ?'),
    activities: q('SELECT * FROM activities WHERE organization_id = ? AND id < ? ORDER BY id DESC LIMIT ?'),
    votes: q('SELECT * FROM votes WHERE activity_id = ? ORDER BY created_at_ms, id'),
    walletExported: q(
      'UPDATE wallets SET exported = 1, updated_at_ms = ? WHERE organization_id = ? AND id = ?',
    ),
    keyExported: q(
      'UPDATE private_keys SET exported = 1, updated_at_ms = ? WHERE organization_id = ? AND id = ?',
    ),
    delAccounts: q('DELETE FROM wallet_accounts WHERE organization_id = ? AND wallet_id = ?'),
    delWallet: q('DELETE FROM wallets WHERE organization_id = ? AND id = ?'),
    serviceKey: q('SELECT * FROM service_keys WHERE id = ?'),
    insServiceKey: q(
      'INSERT INTO service_keys (id, public_key, sealed_key, created_at_ms) VALUES (?,?,?,?) ON CONFLICT (id) DO NOTHING',
    ),
  };

  const toKey = (r: Row): PrivateKeyRecord => ({
    id: str(r.id),
    organizationId: str(r.organization_id),
    name: str(r.name),
    curve: str(r.curve),
    publicKey: str(r.public_key),
    sealedKey: bytes(r.sealed_key),
    addresses: s.keyAddrs.all(r.id).map((a) => ({ format: str(a.format), address: str(a.address) })),
    tags: JSON.parse(str(r.tags_json)) as string[],
    exported: num(r.exported) === 1,
    imported: num(r.imported) === 1,
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  });

  const insertVote = (v: VoteRecord): void =>
    void s.insVote.run(
      v.id,
      v.activityId,
      v.userId,
      v.selection,
      v.message,
      v.publicKey,
      v.signature,
      v.scheme,
      v.createdAtMs,
    );

  const tx: StoreTx = {
    insertOrganization: (r) =>
      void s.insOrg.run(r.id, r.name, r.parentId, r.rootQuorumThreshold, r.createdAtMs),
    insertUser: (r) =>
      void s.insUser.run(
        r.id,
        r.organizationId,
        r.name,
        r.email,
        r.phoneNumber,
        b(r.isRoot),
        r.createdAtMs,
        r.updatedAtMs,
      ),
    insertApiKey: (r) =>
      void s.insApiKey.run(
        r.id,
        r.userId,
        r.organizationId,
        r.name,
        r.publicKey,
        r.curve,
        r.expiresAtMs,
        r.createdAtMs,
      ),
    insertAuthenticator: (r) =>
      void s.insAuth.run(
        r.id,
        r.userId,
        r.organizationId,
        r.name,
        r.credentialId,
        r.publicKey,
        r.createdAtMs,
      ),
    insertWallet: (r) =>
      void s.insWallet.run(
        r.id,
        r.organizationId,
        r.name,
        r.sealedMnemonic,
        b(r.exported),
        b(r.imported),
        r.createdAtMs,
        r.updatedAtMs,
      ),
    insertWalletAccount: (r) =>
      void s.insAccount.run(
        r.id,
        r.organizationId,
        r.walletId,
        r.curve,
        r.pathFormat,
        r.path,
        r.addressFormat,
        r.address,
        r.address.toLowerCase(),
        r.publicKey,
        r.sealedKey,
        r.createdAtMs,
        r.updatedAtMs,
      ),
    insertPrivateKey: (r) => {
      s.insKey.run(
        r.id,
        r.organizationId,
        r.name,
        r.curve,
        r.publicKey,
        r.sealedKey,
        JSON.stringify(r.tags),
        b(r.exported),
        b(r.imported),
        r.createdAtMs,
        r.updatedAtMs,
      );
      r.addresses.forEach((a, i) =>
        s.insKeyAddr.run(r.id, r.organizationId, a.format, a.address, a.address.toLowerCase(), i),
      );
    },
    insertVote: (v) => insertVote(v),
    updateActivity: (id, expected, u) =>
      s.updActivity.run(u.status, u.resultJson, u.failureJson, u.updatedAtMs, id, expected).changes === 1,
    insertPolicy: (r) =>
      void s.insPolicy.run(
        r.id,
        r.organizationId,
        r.name,
        r.effect,
        r.condition,
        r.consensus,
        r.time,
        r.notes,
        r.createdAtMs,
        r.updatedAtMs,
      ),
    updatePolicy: (r) =>
      s.updPolicy.run(
        r.name,
        r.effect,
        r.condition,
        r.consensus,
        r.time,
        r.notes,
        r.updatedAtMs,
        r.organizationId,
        r.id,
      ).changes === 1,
    deletePolicy: (org, id) => s.delPolicy.run(org, id).changes === 1,
    getPolicy: (org, id) => {
      const r = s.policy.get(org, id);
      return r && toPolicy(r);
    },
    policyNameTaken: (org, name, exceptId) => s.policyName.get(org, name, exceptId ?? '') !== undefined,
    insertPolicyEvaluation: (r) =>
      void s.insEvaluation.run(
        r.id,
        r.activityId,
        r.organizationId,
        r.voteId,
        r.outcome,
        r.resultsJson,
        r.createdAtMs,
      ),
    insertActivity: (r, votes) => {
      s.insActivity.run(
        r.id,
        r.organizationId,
        r.type,
        r.status,
        r.fingerprint,
        r.intentKey,
        r.intentJson,
        r.resultKey,
        r.resultJson,
        r.failureJson,
        r.timestampMs,
        r.createdAtMs,
        r.updatedAtMs,
      );
      for (const v of votes) insertVote(v);
    },
    walletNameTaken: (org, name) => s.walletName.get(org, name) !== undefined,
    privateKeyNameTaken: (org, name) => s.keyName.get(org, name) !== undefined,
    walletAccountExists: (w, c, p, f) => s.accountExists.get(w, c, p, f) !== undefined,
    getWallet: (org, id) => {
      const r = s.wallet.get(org, id);
      return r && toWallet(r);
    },
    markWalletExported: (org, id, nowMs) => s.walletExported.run(nowMs, org, id).changes === 1,
    markPrivateKeyExported: (org, id, nowMs) => s.keyExported.run(nowMs, org, id).changes === 1,
    deleteWallet: (org, id) => {
      // Accounts first: they reference the wallet (foreign key), and their rows hold the sealed keys.
      s.delAccounts.run(org, id);
      return s.delWallet.run(org, id).changes === 1;
    },
    insertServiceKeyIfAbsent: (r) => {
      s.insServiceKey.run(r.id, r.publicKey, r.sealedKey, r.createdAtMs);
      const stored = s.serviceKey.get(r.id);
      if (stored === undefined) throw new Error(`service key ${r.id} vanished after insert`);
      return toServiceKey(stored);
    },
  };

  let queue: QueuedWrite[] = [];
  let scheduled = false;
  let closed = false;

  const flush = (): void => {
    scheduled = false;
    const batch = queue.length <= MAX_BATCH ? queue : queue.slice(0, MAX_BATCH);
    queue = queue.length <= MAX_BATCH ? [] : queue.slice(MAX_BATCH);
    if (queue.length > 0) {
      scheduled = true;
      setImmediate(flush);
    }
    if (batch.length === 0) return;
    const outcomes: { ok: boolean; value: unknown }[] = [];
    try {
      db.exec('BEGIN IMMEDIATE');
      for (const w of batch) {
        db.exec('SAVEPOINT w');
        try {
          outcomes.push({ ok: true, value: w.fn(tx) });
          db.exec('RELEASE w');
        } catch (e) {
          db.exec('ROLLBACK TO w');
          db.exec('RELEASE w');
          outcomes.push({ ok: false, value: e });
        }
      }
      db.exec('COMMIT');
    } catch (e) {
      if (db.inTransaction) db.exec('ROLLBACK');
      for (const w of batch) w.reject(e);
      return;
    }
    batch.forEach((w, i) => {
      const o = outcomes[i] as { ok: boolean; value: unknown };
      if (o.ok) w.resolve(o.value);
      else w.reject(o.value);
    });
  };

  const store: Store = {
    write<T>(fn: (t: StoreTx) => T): Promise<T> {
      if (closed) return Promise.reject(new Error('store is closed'));
      return new Promise<T>((resolve, reject) => {
        queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    getOrganization: async (id) => {
      const r = s.org.get(id);
      return r && toOrg(r);
    },
    getUser: async (id) => {
      const r = s.user.get(id);
      return r && toUser(r);
    },
    listUsers: async (org) => s.users.all(org).map(toUser),
    listApiKeys: async (userId) => s.apiKeysOfUser.all(userId).map(toApiKey),
    findApiKeys: async (pub, orgs) =>
      s.apiKeysByPub
        .all(pub)
        .map(toApiKey)
        .filter((k) => orgs.includes(k.organizationId)),
    findAuthenticators: async (cred, orgs) =>
      s.authsByCred
        .all(cred)
        .map(toAuthenticator)
        .filter((a) => orgs.includes(a.organizationId)),
    getWallet: async (org, id) => {
      const r = s.wallet.get(org, id);
      return r && toWallet(r);
    },
    listWallets: async (org) => s.wallets.all(org).map(toWallet),
    getWalletAccountByAddress: async (org, wallet, address) => {
      const r = s.accountByAddr.get(org, wallet, address.toLowerCase());
      return r && toAccount(r);
    },
    getWalletAccountByPath: async (org, wallet, path) => {
      const r = s.accountByPath.get(org, wallet, path);
      return r && toAccount(r);
    },
    listWalletAccounts: async (org, wallet, page) =>
      (wallet === undefined
        ? s.accountsAll.all(org, page.after ?? '', page.limit)
        : s.accountsOfWallet.all(org, wallet, page.after ?? '', page.limit)
      ).map(toAccount),
    getPrivateKey: async (org, id) => {
      const r = s.key.get(org, id);
      return r && toKey(r);
    },
    listPrivateKeys: async (org) => s.keys.all(org).map(toKey),
    resolveSigningKey: async (org, signWith): Promise<SigningKeyRecord | undefined> => {
      const byId = s.key.get(org, signWith);
      if (byId)
        return {
          kind: 'private_key',
          recordId: str(byId.id),
          organizationId: org,
          curve: str(byId.curve),
          publicKey: str(byId.public_key),
          sealedKey: bytes(byId.sealed_key),
          address: null,
          addressFormat: null,
          walletId: null,
          privateKeyId: str(byId.id),
        };
      const lc = signWith.toLowerCase();
      const acc = s.accountBySignAddr.get(org, lc);
      if (acc)
        return {
          kind: 'wallet_account',
          recordId: str(acc.id),
          organizationId: org,
          curve: str(acc.curve),
          publicKey: str(acc.public_key),
          sealedKey: bytes(acc.sealed_key),
          address: str(acc.address),
          addressFormat: str(acc.address_format),
          walletId: str(acc.wallet_id),
          privateKeyId: null,
        };
      const key = s.keyByAddr.get(org, lc);
      if (key)
        return {
          kind: 'private_key',
          recordId: str(key.id),
          organizationId: org,
          curve: str(key.curve),
          publicKey: str(key.public_key),
          sealedKey: bytes(key.sealed_key),
          address: str(key.matched_address),
          addressFormat: str(key.matched_format),
          walletId: null,
          privateKeyId: str(key.id),
        };
      return undefined;
    },
    getActivity: async (org, id) => {
      const r = s.activity.get(org, id);
      return r && toActivity(r);
    },
    getActivityByFingerprint: async (fp) => {
      const r = s.activityByFp.get(fp);
      return r && toActivity(r);
    },
    listVotes: async (activityId) => s.votes.all(activityId).map(toVote),
    listActivities: async (org, page) =>
      s.activities.all(org, page.before ?? '\uffff', page.limit).map(toActivity),
    getPolicy: async (org, id) => {
      const r = s.policy.get(org, id);
      return r && toPolicy(r);
    },
    listPolicies: async (org) => s.policies.all(org).map(toPolicy),
    listPolicyEvaluations: async (activityId) => s.evaluations.all(activityId).map(toPolicyEvaluation),
    getServiceKey: async (id) => {
      const r = s.serviceKey.get(id);
      return r && toServiceKey(r);
    },
    close: async () => {
      closed = true;
      flush();
      if (checkpointer !== undefined) {
        const stopped = new Promise((resolve) => checkpointer?.once('exit', resolve));
        // Unref'd while running so it never keeps a process alive; held while we wait for it.
        checkpointer.ref();
        checkpointer.postMessage('stop');
        await stopped;
      }
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.close();
    },
  };
  return store;
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
