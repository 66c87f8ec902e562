/**
 * The embedded store: SQLite through better-sqlite3, WAL with synchronous=FULL, so a write whose
 * promise resolved survives `kill -9` and power loss. Writes are group-committed: every write
 * queued during one turn of the event loop runs in a single transaction (each in its own
 * savepoint, so one failing write does not undo the others) and one fsync covers them all.
 */
import { randomUUID } from 'node:crypto'; // --- webhooks ---
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { ensurePrivateDatabaseFile } from '../../shared/privateFile.js';
import { MIGRATIONS } from './schema.js';
import { observeStoreWrite } from '../../observability/metrics.js'; // --- operability ---
import { authProxyParts } from './authProxy.js'; // --- auth proxy ---
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
  UserTagRecord, // --- users ---
  OAuthProviderRecord, // --- users ---
  InvitationRecord, // --- users ---
  SmartContractInterfaceRecord, // --- other resources ---
  SmartContractInterfaceType, // --- other resources ---
  FiatOnRampCredentialRecord, // --- other resources ---
  FiatOnRampProvider, // --- other resources ---
  TvcDeploymentRecord, // --- other resources ---
  TvcDeploymentStatus, // --- other resources ---
  OrganizationFeatureRecord, // --- other resources ---
  LoginSessionRecord, // --- sub-organizations and sessions ---
  SendTransactionRecord, // --- eth send transaction ---
  SendKind, // --- eth send transaction ---
  SendTransactionStatus, // --- eth send transaction ---
  PrivateKeyTagRecord, // --- administration ---
  ImportTargetKind, // --- key and wallet import ---
  ImportTargetRecord, // --- key and wallet import ---
  WebhookAttemptOutcome, // --- webhooks ---
  WebhookDeliveryRecord, // --- webhooks ---
  WebhookDeliverySource, // --- webhooks ---
  WebhookDeliveryState, // --- webhooks ---
  WebhookEndpointRecord, // --- webhooks ---
  WebhookEventType, // --- webhooks ---
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
    appProofsJson: nstr(r.app_proofs_json),
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
  if (path !== ':memory:') ensurePrivateDatabaseFile(path);
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
      `INSERT INTO activities (id, organization_id, type, status, fingerprint, intent_key, intent_json, result_key, result_json, failure_json, timestamp_ms, created_at_ms, updated_at_ms, app_proofs_json)
       VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
    ),
    insVote: q(
      'INSERT INTO votes (id, activity_id, user_id, selection, message, public_key, signature, scheme, created_at_ms) VALUES (?,?,?,?,?,?,?,?,?)',
    ),
    // app_proofs_json is kept unless the update brings proofs.
    updActivity: q(
      'UPDATE activities SET status = ?, result_json = ?, failure_json = ?, updated_at_ms = ?, app_proofs_json = COALESCE(?, app_proofs_json) WHERE id = ? AND status = ?',
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
    org: q('SELECT * FROM organizations WHERE id = ? AND deleted_at_ms IS NULL'),
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
    activities: q(
      `SELECT * FROM activities WHERE organization_id = ? AND id < ?
         AND (? IS NULL OR status IN (SELECT value FROM json_each(?)))
         AND (? IS NULL OR type IN (SELECT value FROM json_each(?)))
       ORDER BY id DESC LIMIT ?`,
    ),
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

  const users = usersParts(db); // --- users ---
  const otherResources = otherResourcesParts(db); // --- other resources ---
  const suborgs = suborgParts(db); // --- sub-organizations and sessions ---
  const sends = sendParts(db); // --- eth send transaction ---
  const admin = adminParts(db, toKey); // --- administration ---
  const imports = importParts(db); // --- key and wallet import ---
  const webhooks = webhooksParts(db); // --- webhooks ---
  const authProxy = authProxyParts(db); // --- auth proxy ---
  const tx: StoreTx = {
    ...authProxy.tx, // --- auth proxy ---
    ...webhooks.tx, // --- webhooks ---
    ...admin.tx, // --- administration ---
    ...imports.tx, // --- key and wallet import ---
    ...sends.tx, // --- eth send transaction ---
    ...suborgs.tx, // --- sub-organizations and sessions ---
    ...otherResources.tx, // --- other resources ---
    ...users.tx, // --- users ---
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
      s.updActivity.run(
        u.status,
        u.resultJson,
        u.failureJson,
        u.updatedAtMs,
        u.appProofsJson ?? null,
        id,
        expected,
      ).changes === 1,
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
        r.appProofsJson ?? null,
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
    const began = process.hrtime.bigint(); // --- operability ---
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
      const committing = process.hrtime.bigint(); // --- operability ---
      db.exec('COMMIT');
      observeStoreWrite(began, committing); // --- operability ---
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
    ...authProxy.read, // --- auth proxy ---
    ...webhooks.read, // --- webhooks ---
    ...admin.read, // --- administration ---
    ...imports.read, // --- key and wallet import ---
    ...sends.read, // --- eth send transaction ---
    ...suborgs.read, // --- sub-organizations and sessions ---
    ...otherResources.read, // --- other resources ---
    ...users.read, // --- users ---
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
    listActivities: async (org, page, filter = {}) => {
      const statuses = filter.statuses === undefined ? null : JSON.stringify(filter.statuses);
      const types = filter.types === undefined ? null : JSON.stringify(filter.types);
      return s.activities
        .all(org, page.before ?? '\uffff', statuses, statuses, types, types, page.limit)
        .map(toActivity);
    },
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

// --- users ---
// Users, API keys, OAuth providers, user tags and invitations (issue 4); spread into the store's
// transaction and read objects above.
function usersParts(db: Database.Database): {
  tx: Pick<
    StoreTx,
    | 'getUser'
    | 'updateUser'
    | 'deleteUser'
    | 'listApiKeysOfUser'
    | 'apiKeyPublicKeyTaken'
    | 'deleteApiKey'
    | 'authenticatorCredentialTaken'
    | 'insertOAuthProvider'
    | 'oauthProviderTaken'
    | 'insertUserTag'
    | 'getUserTag'
    | 'userTagNameTaken'
    | 'setUserTags'
    | 'addUserToTag'
    | 'insertInvitation'
    | 'deleteInvitation'
  >;
  read: Pick<
    Store,
    | 'listUserTags'
    | 'listUserTagIds'
    | 'listAuthenticators'
    | 'listOAuthProviders'
    | 'getApiKey'
    | 'listApiKeysOfOrganization'
    | 'getInvitation'
  >;
} {
  const p = (sql: string) => db.prepare(sql);
  const s = {
    user: p('SELECT * FROM users WHERE id = ?'),
    updUser: p(
      'UPDATE users SET name = ?, email = ?, phone_number = ?, updated_at_ms = ? WHERE organization_id = ? AND id = ?',
    ),
    delUserKeys: p('DELETE FROM api_keys WHERE user_id = ?'),
    delUserAuths: p('DELETE FROM authenticators WHERE user_id = ?'),
    delUserOauth: p('DELETE FROM oauth_providers WHERE user_id = ?'),
    delUserTags: p('DELETE FROM user_tag_members WHERE user_id = ?'),
    delUser: p('DELETE FROM users WHERE organization_id = ? AND id = ?'),
    keysOfUser: p('SELECT * FROM api_keys WHERE user_id = ? ORDER BY created_at_ms, id'),
    keyTaken: p('SELECT 1 FROM api_keys WHERE organization_id = ? AND public_key = ?'),
    delKey: p('DELETE FROM api_keys WHERE user_id = ? AND id = ?'),
    credTaken: p('SELECT 1 FROM authenticators WHERE organization_id = ? AND credential_id = ?'),
    insOauth: p(
      `INSERT INTO oauth_providers (id, user_id, organization_id, name, issuer, audience, subject, created_at_ms)
       VALUES (?,?,?,?,?,?,?,?)`,
    ),
    oauthTaken: p(
      'SELECT 1 FROM oauth_providers WHERE organization_id = ? AND issuer = ? AND audience = ? AND subject = ?',
    ),
    insTag: p(
      'INSERT INTO user_tags (id, organization_id, name, created_at_ms, updated_at_ms) VALUES (?,?,?,?,?)',
    ),
    tag: p('SELECT * FROM user_tags WHERE organization_id = ? AND id = ?'),
    tagName: p('SELECT 1 FROM user_tags WHERE organization_id = ? AND name = ?'),
    insMember: p('INSERT INTO user_tag_members (tag_id, user_id) VALUES (?,?) ON CONFLICT DO NOTHING'),
    tags: p('SELECT * FROM user_tags WHERE organization_id = ? ORDER BY created_at_ms, id'),
    tagIdsOfUser: p(
      `SELECT m.tag_id FROM user_tag_members m JOIN user_tags t ON t.id = m.tag_id
       WHERE m.user_id = ? ORDER BY t.created_at_ms, t.id`,
    ),
    authsOfUser: p('SELECT * FROM authenticators WHERE user_id = ? ORDER BY created_at_ms, id'),
    oauthOfUser: p('SELECT * FROM oauth_providers WHERE user_id = ? ORDER BY created_at_ms, id'),
    key: p('SELECT * FROM api_keys WHERE organization_id = ? AND id = ?'),
    keysOfOrg: p('SELECT * FROM api_keys WHERE organization_id = ? ORDER BY created_at_ms, id'),
    insInvitation: p(
      `INSERT INTO invitations (id, organization_id, receiver_user_name, receiver_email, receiver_tags_json, access_type, sender_user_id, status, created_at_ms, updated_at_ms)
       VALUES (?,?,?,?,?,?,?,?,?,?)`,
    ),
    delInvitation: p('DELETE FROM invitations WHERE organization_id = ? AND id = ?'),
    invitation: p('SELECT * FROM invitations WHERE organization_id = ? AND id = ?'),
  };
  const row = (v: unknown): Row | undefined => v as Row | undefined;
  const rows = (v: unknown): Row[] => v as Row[];
  const toTag = (r: Row): UserTagRecord => ({
    id: str(r.id),
    organizationId: str(r.organization_id),
    name: str(r.name),
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  });
  const toOauth = (r: Row): OAuthProviderRecord => ({
    id: str(r.id),
    userId: str(r.user_id),
    organizationId: str(r.organization_id),
    name: str(r.name),
    issuer: str(r.issuer),
    audience: str(r.audience),
    subject: str(r.subject),
    createdAtMs: num(r.created_at_ms),
  });
  const toInvitation = (r: Row): InvitationRecord => ({
    id: str(r.id),
    organizationId: str(r.organization_id),
    receiverUserName: str(r.receiver_user_name),
    receiverEmail: str(r.receiver_email),
    receiverUserTags: JSON.parse(str(r.receiver_tags_json)) as string[],
    accessType: str(r.access_type) as InvitationRecord['accessType'],
    senderUserId: str(r.sender_user_id),
    status: str(r.status) as InvitationRecord['status'],
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  });
  return {
    tx: {
      getUser: (id) => {
        const r = row(s.user.get(id));
        return r && toUser(r);
      },
      updateUser: (r) =>
        s.updUser.run(r.name, r.email, r.phoneNumber, r.updatedAtMs, r.organizationId, r.id).changes === 1,
      deleteUser: (org, id) => {
        const r = row(s.user.get(id));
        if (r === undefined || str(r.organization_id) !== org) return false;
        // Credentials and memberships first: they reference the user (foreign keys).
        s.delUserKeys.run(id);
        s.delUserAuths.run(id);
        s.delUserOauth.run(id);
        s.delUserTags.run(id);
        return s.delUser.run(org, id).changes === 1;
      },
      listApiKeysOfUser: (userId) => rows(s.keysOfUser.all(userId)).map(toApiKey),
      apiKeyPublicKeyTaken: (org, pub) => s.keyTaken.get(org, pub) !== undefined,
      deleteApiKey: (userId, id) => s.delKey.run(userId, id).changes === 1,
      authenticatorCredentialTaken: (org, cred) => s.credTaken.get(org, cred) !== undefined,
      insertOAuthProvider: (r) =>
        void s.insOauth.run(
          r.id,
          r.userId,
          r.organizationId,
          r.name,
          r.issuer,
          r.audience,
          r.subject,
          r.createdAtMs,
        ),
      oauthProviderTaken: (org, iss, aud, sub) => s.oauthTaken.get(org, iss, aud, sub) !== undefined,
      insertUserTag: (r) => void s.insTag.run(r.id, r.organizationId, r.name, r.createdAtMs, r.updatedAtMs),
      getUserTag: (org, id) => {
        const r = row(s.tag.get(org, id));
        return r && toTag(r);
      },
      userTagNameTaken: (org, name) => s.tagName.get(org, name) !== undefined,
      setUserTags: (userId, tagIds) => {
        s.delUserTags.run(userId);
        for (const t of tagIds) s.insMember.run(t, userId);
      },
      addUserToTag: (tagId, userId) => void s.insMember.run(tagId, userId),
      insertInvitation: (r) =>
        void s.insInvitation.run(
          r.id,
          r.organizationId,
          r.receiverUserName,
          r.receiverEmail,
          JSON.stringify(r.receiverUserTags),
          r.accessType,
          r.senderUserId,
          r.status,
          r.createdAtMs,
          r.updatedAtMs,
        ),
      deleteInvitation: (org, id) => s.delInvitation.run(org, id).changes === 1,
    },
    read: {
      listUserTags: async (org) => rows(s.tags.all(org)).map(toTag),
      listUserTagIds: async (userId) => rows(s.tagIdsOfUser.all(userId)).map((r) => str(r.tag_id)),
      listAuthenticators: async (userId) => rows(s.authsOfUser.all(userId)).map(toAuthenticator),
      listOAuthProviders: async (userId) => rows(s.oauthOfUser.all(userId)).map(toOauth),
      getApiKey: async (org, id) => {
        const r = row(s.key.get(org, id));
        return r && toApiKey(r);
      },
      listApiKeysOfOrganization: async (org) => rows(s.keysOfOrg.all(org)).map(toApiKey),
      getInvitation: async (org, id) => {
        const r = row(s.invitation.get(org, id));
        return r && toInvitation(r);
      },
    },
  };
}
// --- end users ---

// --- other resources ---
// Smart contract interfaces, fiat on-ramp credentials, TVC deployments and organization features
// (issue 4); spread into the store's transaction and read objects above.
type OtherResourcesTx = Pick<
  StoreTx,
  | 'insertSmartContractInterface'
  | 'smartContractInterfaceExists'
  | 'deleteSmartContractInterface'
  | 'insertFiatOnRampCredential'
  | 'getFiatOnRampCredential'
  | 'fiatOnRampCredentialTaken'
  | 'updateFiatOnRampCredential'
  | 'deleteFiatOnRampCredential'
  | 'insertTvcDeployment'
  | 'getTvcDeployment'
  | 'setTvcDeploymentStatus'
  | 'setOrganizationFeature'
  | 'removeOrganizationFeature'
  | 'listOrganizationFeatures'
>;
type OtherResourcesRead = Pick<
  Store,
  | 'getSmartContractInterface'
  | 'listSmartContractInterfaces'
  | 'listFiatOnRampCredentials'
  | 'getTvcDeployment'
  | 'listTvcDeployments'
  | 'listOrganizationFeatures'
>;

/** Ethereum addresses compare case-insensitively (EIP-55 is only a checksum); Solana's are base58. */
const interfaceAddressKey = (type: SmartContractInterfaceType, address: string): string =>
  type === 'SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM' ? address.toLowerCase() : address;

function otherResourcesParts(db: Database.Database): { tx: OtherResourcesTx; read: OtherResourcesRead } {
  const p = (sql: string) => db.prepare(sql);
  const s = {
    insSci: p(
      `INSERT INTO smart_contract_interfaces (id, organization_id, type, address, address_key, interface_json, label, notes, created_at_ms, updated_at_ms)
       VALUES (?,?,?,?,?,?,?,?,?,?)`,
    ),
    sciExists: p(
      'SELECT 1 FROM smart_contract_interfaces WHERE organization_id = ? AND type = ? AND address_key = ?',
    ),
    delSci: p('DELETE FROM smart_contract_interfaces WHERE organization_id = ? AND id = ?'),
    sci: p('SELECT * FROM smart_contract_interfaces WHERE organization_id = ? AND id = ?'),
    scis: p('SELECT * FROM smart_contract_interfaces WHERE organization_id = ? ORDER BY created_at_ms, id'),
    insFiat: p(
      `INSERT INTO fiat_on_ramp_credentials (id, organization_id, provider, project_id, publishable_api_key, sealed_secret_api_key, sealed_private_api_key, sandbox_mode, created_at_ms, updated_at_ms)
       VALUES (?,?,?,?,?,?,?,?,?,?)`,
    ),
    fiat: p('SELECT * FROM fiat_on_ramp_credentials WHERE organization_id = ? AND id = ?'),
    fiats: p('SELECT * FROM fiat_on_ramp_credentials WHERE organization_id = ? ORDER BY created_at_ms, id'),
    fiatTaken: p(
      'SELECT 1 FROM fiat_on_ramp_credentials WHERE organization_id = ? AND provider = ? AND sandbox_mode = ? AND id <> ?',
    ),
    updFiat: p(
      `UPDATE fiat_on_ramp_credentials SET provider = ?, project_id = ?, publishable_api_key = ?, sealed_secret_api_key = ?,
       sealed_private_api_key = ?, sandbox_mode = ?, updated_at_ms = ? WHERE organization_id = ? AND id = ?`,
    ),
    delFiat: p('DELETE FROM fiat_on_ramp_credentials WHERE organization_id = ? AND id = ?'),
    insTvc: p(
      `INSERT INTO tvc_deployments (id, organization_id, app_id, manifest_id, status, spec_json, sealed_pull_secret, created_at_ms, updated_at_ms)
       VALUES (?,?,?,?,?,?,?,?,?)`,
    ),
    tvc: p('SELECT * FROM tvc_deployments WHERE organization_id = ? AND id = ?'),
    tvcs: p('SELECT * FROM tvc_deployments WHERE organization_id = ? ORDER BY created_at_ms, id'),
    tvcsOfApp: p(
      'SELECT * FROM tvc_deployments WHERE organization_id = ? AND app_id = ? ORDER BY created_at_ms, id',
    ),
    tvcStatus: p(
      'UPDATE tvc_deployments SET status = ?, updated_at_ms = ? WHERE organization_id = ? AND id = ? AND status = ?',
    ),
    setFeature: p(
      `INSERT INTO organization_features (organization_id, name, value, created_at_ms, updated_at_ms) VALUES (?,?,?,?,?)
       ON CONFLICT (organization_id, name) DO UPDATE SET value = excluded.value, updated_at_ms = excluded.updated_at_ms`,
    ),
    delFeature: p('DELETE FROM organization_features WHERE organization_id = ? AND name = ?'),
    features: p('SELECT * FROM organization_features WHERE organization_id = ? ORDER BY name'),
  };
  const get = (st: Database.Statement, ...a: unknown[]) => st.get(...a) as Row | undefined;
  const all = (st: Database.Statement, ...a: unknown[]) => st.all(...a) as Row[];

  const toSci = (r: Row): SmartContractInterfaceRecord => ({
    id: str(r.id),
    organizationId: str(r.organization_id),
    type: str(r.type) as SmartContractInterfaceType,
    address: str(r.address),
    interfaceJson: str(r.interface_json),
    label: str(r.label),
    notes: str(r.notes),
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  });
  const toFiat = (r: Row): FiatOnRampCredentialRecord => ({
    id: str(r.id),
    organizationId: str(r.organization_id),
    provider: str(r.provider) as FiatOnRampProvider,
    projectId: nstr(r.project_id),
    publishableApiKey: str(r.publishable_api_key),
    sealedSecretApiKey: bytes(r.sealed_secret_api_key),
    sealedPrivateApiKey: r.sealed_private_api_key === null ? null : bytes(r.sealed_private_api_key),
    sandboxMode: num(r.sandbox_mode) === 1,
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  });
  const toTvc = (r: Row): TvcDeploymentRecord => ({
    id: str(r.id),
    organizationId: str(r.organization_id),
    appId: str(r.app_id),
    manifestId: str(r.manifest_id),
    status: str(r.status) as TvcDeploymentStatus,
    specJson: str(r.spec_json),
    sealedPullSecret: r.sealed_pull_secret === null ? null : bytes(r.sealed_pull_secret),
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  });
  const toFeature = (r: Row): OrganizationFeatureRecord => ({
    organizationId: str(r.organization_id),
    name: str(r.name),
    value: str(r.value),
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  });
  const getFiat = (org: string, id: string) => {
    const r = get(s.fiat, org, id);
    return r && toFiat(r);
  };
  const getTvc = (org: string, id: string) => {
    const r = get(s.tvc, org, id);
    return r && toTvc(r);
  };
  const features = (org: string) => all(s.features, org).map(toFeature);

  return {
    tx: {
      insertSmartContractInterface: (r) =>
        void s.insSci.run(
          r.id,
          r.organizationId,
          r.type,
          r.address,
          interfaceAddressKey(r.type, r.address),
          r.interfaceJson,
          r.label,
          r.notes,
          r.createdAtMs,
          r.updatedAtMs,
        ),
      smartContractInterfaceExists: (org, type, address) =>
        get(s.sciExists, org, type, interfaceAddressKey(type, address)) !== undefined,
      deleteSmartContractInterface: (org, id) => s.delSci.run(org, id).changes === 1,
      insertFiatOnRampCredential: (r) =>
        void s.insFiat.run(
          r.id,
          r.organizationId,
          r.provider,
          r.projectId,
          r.publishableApiKey,
          r.sealedSecretApiKey,
          r.sealedPrivateApiKey,
          b(r.sandboxMode),
          r.createdAtMs,
          r.updatedAtMs,
        ),
      getFiatOnRampCredential: getFiat,
      fiatOnRampCredentialTaken: (org, provider, sandbox, exceptId) =>
        get(s.fiatTaken, org, provider, b(sandbox), exceptId ?? '') !== undefined,
      updateFiatOnRampCredential: (r) =>
        s.updFiat.run(
          r.provider,
          r.projectId,
          r.publishableApiKey,
          r.sealedSecretApiKey,
          r.sealedPrivateApiKey,
          b(r.sandboxMode),
          r.updatedAtMs,
          r.organizationId,
          r.id,
        ).changes === 1,
      deleteFiatOnRampCredential: (org, id) => s.delFiat.run(org, id).changes === 1,
      insertTvcDeployment: (r) =>
        void s.insTvc.run(
          r.id,
          r.organizationId,
          r.appId,
          r.manifestId,
          r.status,
          r.specJson,
          r.sealedPullSecret,
          r.createdAtMs,
          r.updatedAtMs,
        ),
      getTvcDeployment: getTvc,
      setTvcDeploymentStatus: (org, id, expected, next, nowMs) =>
        s.tvcStatus.run(next, nowMs, org, id, expected).changes === 1,
      setOrganizationFeature: (org, name, value, nowMs) =>
        void s.setFeature.run(org, name, value, nowMs, nowMs),
      removeOrganizationFeature: (org, name) => s.delFeature.run(org, name).changes === 1,
      listOrganizationFeatures: features,
    },
    read: {
      getSmartContractInterface: async (org, id) => {
        const r = get(s.sci, org, id);
        return r && toSci(r);
      },
      listSmartContractInterfaces: async (org) => all(s.scis, org).map(toSci),
      listFiatOnRampCredentials: async (org) => all(s.fiats, org).map(toFiat),
      getTvcDeployment: async (org, id) => getTvc(org, id),
      listTvcDeployments: async (org, appId) =>
        (appId === undefined ? all(s.tvcs, org) : all(s.tvcsOfApp, org, appId)).map(toTvc),
      listOrganizationFeatures: async (org) => features(org),
    },
  };
}
// --- end other resources ---

// --- sub-organizations and sessions ---
// Sub-organization listing, stamp_login session keys and used verification tokens (issue 4); spread
// into the store's transaction and read objects above.
function suborgParts(db: Database.Database): {
  tx: Pick<
    StoreTx,
    'insertLoginSession' | 'deleteLoginSessionKeys' | 'consumeVerificationToken' | 'subOrganizationNameTaken'
  >;
  read: Pick<Store, 'listSubOrganizationIds'>;
} {
  const p = (sql: string) => db.prepare(sql);
  const s = {
    insSession: p(
      'INSERT INTO login_sessions (api_key_id, user_id, organization_id, expires_at_ms, created_at_ms) VALUES (?,?,?,?,?)',
    ),
    sessionKeys: p(
      'SELECT api_key_id FROM login_sessions WHERE user_id = ? ORDER BY created_at_ms, api_key_id',
    ),
    // The session row goes with its key (ON DELETE CASCADE); deleted explicitly too, so the
    // outcome does not hang on the foreign_keys pragma.
    delSession: p('DELETE FROM login_sessions WHERE api_key_id = ?'),
    delKey: p('DELETE FROM api_keys WHERE id = ?'),
    useToken: p(
      'INSERT INTO used_verification_tokens (id, organization_id, used_at_ms) VALUES (?,?,?) ON CONFLICT (id) DO NOTHING',
    ),
    subName: p('SELECT 1 FROM organizations WHERE parent_id = ? AND name = ? AND deleted_at_ms IS NULL'),
  };
  // One statement per filter; the value is compared exactly except emails (case-insensitive) and
  // public keys (stored lower-case hex).
  const base =
    'SELECT o.id FROM organizations o WHERE o.parent_id = ? AND o.deleted_at_ms IS NULL AND o.id > ? AND o.id < ?';
  const tail = ' ORDER BY o.id LIMIT ?';
  const filters = {
    NONE: p(base + tail),
    NAME: p(`${base} AND o.name = ?${tail}`),
    USERNAME: p(
      `${base} AND EXISTS (SELECT 1 FROM users u WHERE u.organization_id = o.id AND u.name = ?)${tail}`,
    ),
    EMAIL: p(
      `${base} AND EXISTS (SELECT 1 FROM users u WHERE u.organization_id = o.id AND lower(u.email) = lower(?))${tail}`,
    ),
    PHONE_NUMBER: p(
      `${base} AND EXISTS (SELECT 1 FROM users u WHERE u.organization_id = o.id AND u.phone_number = ?)${tail}`,
    ),
    PUBLIC_KEY: p(
      `${base} AND EXISTS (SELECT 1 FROM api_keys k WHERE k.organization_id = o.id AND k.public_key = lower(?))${tail}`,
    ),
    CREDENTIAL_ID: p(
      `${base} AND EXISTS (SELECT 1 FROM authenticators a WHERE a.organization_id = o.id AND a.credential_id = ?)${tail}`,
    ),
  };
  return {
    tx: {
      insertLoginSession: (r: LoginSessionRecord) =>
        void s.insSession.run(r.apiKeyId, r.userId, r.organizationId, r.expiresAtMs, r.createdAtMs),
      deleteLoginSessionKeys: (userId) => {
        const ids = (s.sessionKeys.all(userId) as Row[]).map((r) => str(r.api_key_id));
        for (const id of ids) {
          s.delSession.run(id);
          s.delKey.run(id);
        }
        return ids;
      },
      consumeVerificationToken: (id, org, nowMs) => s.useToken.run(id, org, nowMs).changes === 1,
      subOrganizationNameTaken: (parentId, name) => s.subName.get(parentId, name) !== undefined,
    },
    read: {
      listSubOrganizationIds: async (parentId, filter, page) => {
        const range = [parentId, page.after ?? '', page.before ?? '\uffff'];
        const out =
          filter === undefined
            ? filters.NONE.all(...range, page.limit)
            : filters[filter.type].all(...range, filter.value, page.limit);
        return (out as Row[]).map((r) => str(r.id));
      },
    },
  };
}
// --- end sub-organizations and sessions ---

// --- eth send transaction ---
// The nonce allocator and send-status rows of eth_send_transaction (issue 5); spread into the
// store's transaction and read objects above. The allocator reads and increments inside the write,
// and the store runs one write at a time, so two sends never read the same counter.
function toSend(r: Row): SendTransactionRecord {
  return {
    id: str(r.id),
    kind: str(r.kind) as SendKind,
    accountAddress: nstr(r.account_address) ?? str(r.from_address),
    gasStationNonce:
      r.gas_station_nonce === null || r.gas_station_nonce === undefined
        ? null
        : BigInt(str(r.gas_station_nonce)),
    organizationId: str(r.organization_id),
    activityId: str(r.activity_id),
    caip2: str(r.caip2),
    fromAddress: str(r.from_address),
    nonce: BigInt(str(r.nonce)),
    signedTransaction: bytes(r.signed_transaction),
    txHash: str(r.tx_hash),
    status: str(r.status) as SendTransactionStatus,
    blockNumber: r.block_number === null || r.block_number === undefined ? null : BigInt(str(r.block_number)),
    errorMessage: nstr(r.error_message),
    revertChainJson: nstr(r.revert_chain_json),
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  };
}

function sendParts(db: Database.Database): {
  tx: Pick<
    StoreTx,
    'allocateNonce' | 'nextNonce' | 'releaseNonce' | 'insertSendTransaction' | 'updateSendTransaction'
  >;
  read: Pick<
    Store,
    | 'getSendTransaction'
    | 'getSendTransactionById'
    | 'listPendingSendTransactions'
    | 'getNextNonce'
    | 'listSendTransactionTransitions'
  >;
} {
  const p = (sql: string) => db.prepare(sql);
  const s = {
    next: p('SELECT next_nonce FROM eth_nonce_allocations WHERE caip2 = ? AND address = ?'),
    setNext: p(
      'INSERT INTO eth_nonce_allocations (caip2, address, next_nonce) VALUES (?,?,?) ON CONFLICT (caip2, address) DO UPDATE SET next_nonce = excluded.next_nonce',
    ),
    ins: p(
      `INSERT INTO send_transactions (id, organization_id, activity_id, caip2, from_address, nonce,
        signed_transaction, tx_hash, status, block_number, error_message, created_at_ms, updated_at_ms,
        kind, account_address, gas_station_nonce, revert_chain_json)
        VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
    ),
    upd: p(
      `UPDATE send_transactions SET status = ?, block_number = COALESCE(?, block_number),
        error_message = COALESCE(?, error_message),
        revert_chain_json = COALESCE(?, revert_chain_json), updated_at_ms = ?
        WHERE id = ? AND status IN ('INITIALIZED', 'BROADCASTING')`,
    ),
    get: p('SELECT * FROM send_transactions WHERE organization_id = ? AND id = ?'),
    transition: p(
      'INSERT INTO send_transaction_transitions (send_id, status, error_message, at_ms) VALUES (?,?,?,?)',
    ),
    transitions: p(
      'SELECT status, error_message, at_ms FROM send_transaction_transitions WHERE send_id = ? ORDER BY at_ms, rowid',
    ),
    getById: p('SELECT * FROM send_transactions WHERE id = ?'),
    pending: p(
      "SELECT * FROM send_transactions WHERE status IN ('INITIALIZED', 'BROADCASTING') ORDER BY LENGTH(nonce), nonce, created_at_ms",
    ),
  };
  const nextOf = (caip2: string, address: string): bigint | undefined => {
    const r = s.next.get(caip2, address) as Row | undefined;
    return r === undefined ? undefined : BigInt(str(r.next_nonce));
  };
  return {
    tx: {
      allocateNonce: (caip2, address, chainPending, given) => {
        const stored = nextOf(caip2, address) ?? 0n;
        const nonce = given ?? (chainPending > stored ? chainPending : stored);
        const next = nonce + 1n > stored ? nonce + 1n : stored;
        s.setNext.run(caip2, address, next.toString());
        return nonce;
      },
      nextNonce: (caip2, address) => nextOf(caip2, address.toLowerCase()),
      releaseNonce: (caip2, address, nonce) => {
        if (nextOf(caip2, address) !== nonce + 1n) return false;
        s.setNext.run(caip2, address, nonce.toString());
        return true;
      },
      insertSendTransaction: (r: SendTransactionRecord) => {
        s.transition.run(r.id, r.status, r.errorMessage, r.createdAtMs);
        s.ins.run(
          r.id,
          r.organizationId,
          r.activityId,
          r.caip2,
          r.fromAddress,
          r.nonce.toString(),
          Buffer.from(r.signedTransaction),
          r.txHash,
          r.status,
          r.blockNumber === null ? null : r.blockNumber.toString(),
          r.errorMessage,
          r.createdAtMs,
          r.updatedAtMs,
          r.kind,
          r.accountAddress,
          r.gasStationNonce === null ? null : r.gasStationNonce.toString(),
          r.revertChainJson,
        );
      },
      updateSendTransaction: (id, u) => {
        const moved =
          s.upd.run(
            u.status,
            u.blockNumber === undefined ? null : u.blockNumber.toString(),
            u.errorMessage ?? null,
            u.revertChainJson ?? null,
            u.updatedAtMs,
            id,
          ).changes === 1;
        if (moved) s.transition.run(id, u.status, u.errorMessage ?? null, u.updatedAtMs);
        return moved;
      },
    },
    read: {
      getSendTransaction: async (org, id) => {
        const r = s.get.get(org, id) as Row | undefined;
        return r && toSend(r);
      },
      getSendTransactionById: async (id) => {
        const r = s.getById.get(id) as Row | undefined;
        return r && toSend(r);
      },
      listPendingSendTransactions: async () => (s.pending.all() as Row[]).map(toSend),
      getNextNonce: async (caip2, address) => nextOf(caip2, address.toLowerCase()),
      listSendTransactionTransitions: async (id) =>
        (s.transitions.all(id) as Row[]).map((r) => ({
          status: str(r.status) as SendTransactionStatus,
          errorMessage: nstr(r.error_message),
          atMs: num(r.at_ms),
        })),
    },
  };
}
// --- end eth send transaction ---

// --- administration ---
// Renames, root quorum changes, deletions, private-key tags and verified contacts (issue 10); spread
// into the store's transaction and read objects above.
function adminParts(
  db: Database.Database,
  toKey: (r: Row) => PrivateKeyRecord,
): {
  tx: Pick<
    StoreTx,
    | 'renameOrganization'
    | 'setRootQuorum'
    | 'listUsersOfOrganization'
    | 'renameWallet'
    | 'getWalletAccount'
    | 'deleteWalletAccount'
    | 'getPrivateKey'
    | 'deletePrivateKey'
    | 'renameUserTag'
    | 'removeUserFromTag'
    | 'deleteUserTag'
    | 'insertPrivateKeyTag'
    | 'privateKeyTagNameTaken'
    | 'tagPrivateKey'
    | 'untagPrivateKey'
    | 'getPrivateKeyTag'
    | 'renamePrivateKeyTag'
    | 'deletePrivateKeyTag'
    | 'markContactVerified'
    | 'deleteOrganization'
  >;
  read: Pick<Store, 'listPrivateKeyTags' | 'listVerifiedSubOrganizationIds'>;
} {
  const p = (sql: string) => db.prepare(sql);
  const s = {
    renameOrg: p('UPDATE organizations SET name = ? WHERE id = ? AND deleted_at_ms IS NULL'),
    threshold: p('UPDATE organizations SET root_quorum_threshold = ? WHERE id = ?'),
    clearRoot: p('UPDATE users SET is_root = 0 WHERE organization_id = ?'),
    setRoot: p('UPDATE users SET is_root = 1 WHERE organization_id = ? AND id = ?'),
    users: p('SELECT * FROM users WHERE organization_id = ? ORDER BY created_at_ms, id'),
    renameWallet: p('UPDATE wallets SET name = ?, updated_at_ms = ? WHERE organization_id = ? AND id = ?'),
    account: p('SELECT * FROM wallet_accounts WHERE organization_id = ? AND id = ?'),
    delAccount: p('DELETE FROM wallet_accounts WHERE organization_id = ? AND id = ?'),
    key: p('SELECT * FROM private_keys WHERE organization_id = ? AND id = ?'),
    delKeyAddrs: p('DELETE FROM private_key_addresses WHERE organization_id = ? AND private_key_id = ?'),
    delKey: p('DELETE FROM private_keys WHERE organization_id = ? AND id = ?'),
    keyTags: p('SELECT tags_json FROM private_keys WHERE organization_id = ? AND id = ?'),
    setKeyTags: p(
      'UPDATE private_keys SET tags_json = ?, updated_at_ms = ? WHERE organization_id = ? AND id = ?',
    ),
    renameTag: p('UPDATE user_tags SET name = ?, updated_at_ms = ? WHERE organization_id = ? AND id = ?'),
    removeMember: p('DELETE FROM user_tag_members WHERE tag_id = ? AND user_id = ?'),
    tagMembers: p('SELECT user_id FROM user_tag_members WHERE tag_id = ? ORDER BY user_id'),
    delMembers: p('DELETE FROM user_tag_members WHERE tag_id = ?'),
    delTag: p('DELETE FROM user_tags WHERE organization_id = ? AND id = ?'),
    insKeyTag: p(
      'INSERT INTO private_key_tags (id, organization_id, name, created_at_ms, updated_at_ms) VALUES (?,?,?,?,?)',
    ),
    keyTagName: p('SELECT 1 FROM private_key_tags WHERE organization_id = ? AND name = ?'),
    keyTagsOfOrg: p('SELECT * FROM private_key_tags WHERE organization_id = ? ORDER BY created_at_ms, id'),
    keyTag: p('SELECT * FROM private_key_tags WHERE organization_id = ? AND id = ?'),
    renameKeyTag: p(
      'UPDATE private_key_tags SET name = ?, updated_at_ms = ? WHERE organization_id = ? AND id = ?',
    ),
    delKeyTag: p('DELETE FROM private_key_tags WHERE organization_id = ? AND id = ?'),
    keyTagsOfKeys: p('SELECT id, tags_json FROM private_keys WHERE organization_id = ? ORDER BY id'),
    verified: p(
      `INSERT INTO verified_contacts (user_id, kind, value, verified_at_ms) VALUES (?,?,?,?)
       ON CONFLICT (user_id, kind) DO UPDATE SET value = excluded.value, verified_at_ms = excluded.verified_at_ms`,
    ),
    // Everything of the organization that can authenticate or sign, children before parents.
    purge: [
      'DELETE FROM login_sessions WHERE organization_id = ?',
      'DELETE FROM api_keys WHERE organization_id = ?',
      'DELETE FROM authenticators WHERE organization_id = ?',
      'DELETE FROM oauth_providers WHERE organization_id = ?',
      'DELETE FROM wallet_accounts WHERE organization_id = ?',
      'DELETE FROM wallets WHERE organization_id = ?',
      'DELETE FROM private_key_addresses WHERE organization_id = ?',
      'DELETE FROM private_keys WHERE organization_id = ?',
    ].map(p),
    markDeleted: p(
      'UPDATE organizations SET deleted_at_ms = ? WHERE id = ? AND parent_id IS NOT NULL AND deleted_at_ms IS NULL',
    ),
  };
  // A user's contact counts as verified while the verified value is still the user's own.
  const verifiedBase = `SELECT o.id FROM organizations o WHERE o.parent_id = ? AND o.deleted_at_ms IS NULL
    AND o.id > ? AND o.id < ? AND EXISTS (SELECT 1 FROM users u JOIN verified_contacts v ON v.user_id = u.id
    WHERE u.organization_id = o.id`;
  const verifiedBy = {
    EMAIL: {
      any: p(`${verifiedBase} AND v.kind = 'EMAIL' AND lower(u.email) = v.value) ORDER BY o.id LIMIT ?`),
      value: p(
        `${verifiedBase} AND v.kind = 'EMAIL' AND lower(u.email) = v.value AND v.value = lower(?)) ORDER BY o.id LIMIT ?`,
      ),
    },
    PHONE_NUMBER: {
      any: p(
        `${verifiedBase} AND v.kind = 'PHONE_NUMBER' AND u.phone_number = v.value) ORDER BY o.id LIMIT ?`,
      ),
      value: p(
        `${verifiedBase} AND v.kind = 'PHONE_NUMBER' AND u.phone_number = v.value AND v.value = ?) ORDER BY o.id LIMIT ?`,
      ),
    },
  };
  const verifiedAny = p(`${verifiedBase} AND ((v.kind = 'EMAIL' AND lower(u.email) = v.value)
    OR (v.kind = 'PHONE_NUMBER' AND u.phone_number = v.value))) ORDER BY o.id LIMIT ?`);
  const toKeyTag = (r: Row): PrivateKeyTagRecord => ({
    id: str(r.id),
    organizationId: str(r.organization_id),
    name: str(r.name),
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  });
  return {
    tx: {
      renameOrganization: (id, name) => s.renameOrg.run(name, id).changes === 1,
      setRootQuorum: (org, threshold, userIds) => {
        s.clearRoot.run(org);
        for (const id of userIds) s.setRoot.run(org, id);
        s.threshold.run(threshold, org);
      },
      listUsersOfOrganization: (org) => (s.users.all(org) as Row[]).map(toUser),
      renameWallet: (org, id, name, nowMs) => s.renameWallet.run(name, nowMs, org, id).changes === 1,
      getWalletAccount: (org, id) => {
        const r = s.account.get(org, id) as Row | undefined;
        return r && toAccount(r);
      },
      deleteWalletAccount: (org, id) => s.delAccount.run(org, id).changes === 1,
      getPrivateKey: (org, id) => {
        const r = s.key.get(org, id) as Row | undefined;
        return r && toKey(r);
      },
      deletePrivateKey: (org, id) => {
        s.delKeyAddrs.run(org, id);
        return s.delKey.run(org, id).changes === 1;
      },
      renameUserTag: (org, id, name, nowMs) => s.renameTag.run(name, nowMs, org, id).changes === 1,
      removeUserFromTag: (tagId, userId) => void s.removeMember.run(tagId, userId),
      deleteUserTag: (org, id) => {
        const members = (s.tagMembers.all(id) as Row[]).map((r) => str(r.user_id));
        s.delMembers.run(id);
        return s.delTag.run(org, id).changes === 1 ? members : null;
      },
      insertPrivateKeyTag: (r) =>
        void s.insKeyTag.run(r.id, r.organizationId, r.name, r.createdAtMs, r.updatedAtMs),
      privateKeyTagNameTaken: (org, name) => s.keyTagName.get(org, name) !== undefined,
      tagPrivateKey: (org, keyId, tagId, nowMs) => {
        const r = s.keyTags.get(org, keyId) as Row | undefined;
        if (r === undefined) return;
        const tags = JSON.parse(str(r.tags_json)) as string[];
        if (tags.includes(tagId)) return;
        s.setKeyTags.run(JSON.stringify([...tags, tagId]), nowMs, org, keyId);
      },
      untagPrivateKey: (org, keyId, tagId, nowMs) => {
        const r = s.keyTags.get(org, keyId) as Row | undefined;
        if (r === undefined) return;
        const tags = JSON.parse(str(r.tags_json)) as string[];
        if (!tags.includes(tagId)) return;
        s.setKeyTags.run(JSON.stringify(tags.filter((t) => t !== tagId)), nowMs, org, keyId);
      },
      getPrivateKeyTag: (org, id) => {
        const r = s.keyTag.get(org, id) as Row | undefined;
        return r && toKeyTag(r);
      },
      renamePrivateKeyTag: (org, id, name, nowMs) => s.renameKeyTag.run(name, nowMs, org, id).changes === 1,
      deletePrivateKeyTag: (org, id, nowMs) => {
        if (s.delKeyTag.run(org, id).changes !== 1) return null;
        const keys: string[] = [];
        for (const r of s.keyTagsOfKeys.all(org) as Row[]) {
          const tags = JSON.parse(str(r.tags_json)) as string[];
          if (!tags.includes(id)) continue;
          keys.push(str(r.id));
          s.setKeyTags.run(JSON.stringify(tags.filter((t) => t !== id)), nowMs, org, str(r.id));
        }
        return keys;
      },
      markContactVerified: (userId, kind, value, nowMs) =>
        void s.verified.run(userId, kind, kind === 'EMAIL' ? value.toLowerCase() : value, nowMs),
      deleteOrganization: (id, nowMs) => {
        if (s.markDeleted.run(nowMs, id).changes !== 1) return false;
        for (const st of s.purge) st.run(id);
        return true;
      },
    },
    read: {
      listPrivateKeyTags: async (org) => (s.keyTagsOfOrg.all(org) as Row[]).map(toKeyTag),
      listVerifiedSubOrganizationIds: async (parentId, filter, page) => {
        const range = [parentId, page.after ?? '', page.before ?? '\uffff'];
        const out =
          filter === undefined
            ? verifiedAny.all(...range, page.limit)
            : filter.value === undefined
              ? verifiedBy[filter.kind].any.all(...range, page.limit)
              : verifiedBy[filter.kind].value.all(...range, filter.value, page.limit);
        return (out as Row[]).map((r) => str(r.id));
      },
    },
  };
}
// --- end administration ---

// --- key and wallet import ---
// The one-time target keys of init_import_wallet / init_import_private_key (issue 10); spread into
// the store's transaction and read objects above. Consumption is one conditional UPDATE inside the
// write that also inserts the imported wallet or key, so a bundle imports at most once.
function toImportTarget(r: Row): ImportTargetRecord {
  return {
    id: str(r.id),
    organizationId: str(r.organization_id),
    userId: str(r.user_id),
    kind: str(r.kind) as ImportTargetKind,
    publicKey: str(r.public_key),
    sealedKey: r.sealed_key === null || r.sealed_key === undefined ? null : bytes(r.sealed_key),
    expiresAtMs: num(r.expires_at_ms),
    createdAtMs: num(r.created_at_ms),
    consumedAtMs: r.consumed_at_ms === null || r.consumed_at_ms === undefined ? null : num(r.consumed_at_ms),
    consumedEnc: nstr(r.consumed_enc),
  };
}

function importParts(db: Database.Database): {
  tx: Pick<StoreTx, 'insertImportTarget' | 'pruneImportTargets' | 'consumeImportTarget'>;
  read: Pick<Store, 'listOpenImportTargets' | 'getImportTargetConsumedBy'>;
} {
  const p = (sql: string) => db.prepare(sql);
  const s = {
    ins: p(
      `INSERT INTO import_targets (id, organization_id, user_id, kind, public_key, sealed_key, expires_at_ms,
        created_at_ms, consumed_at_ms, consumed_enc) VALUES (?,?,?,?,?,?,?,?,?,?)`,
    ),
    pruneExpired: p(
      `DELETE FROM import_targets WHERE organization_id = ? AND user_id = ? AND consumed_at_ms IS NULL
        AND expires_at_ms <= ?`,
    ),
    prune: p(
      `DELETE FROM import_targets WHERE organization_id = ? AND user_id = ? AND kind = ?
        AND consumed_at_ms IS NULL AND id NOT IN (
          SELECT id FROM import_targets WHERE organization_id = ? AND user_id = ? AND kind = ?
            AND consumed_at_ms IS NULL ORDER BY created_at_ms DESC, id DESC LIMIT ?)`,
    ),
    consume: p(
      `UPDATE import_targets SET consumed_at_ms = ?, consumed_enc = ?, sealed_key = NULL
        WHERE organization_id = ? AND user_id = ? AND id = ? AND consumed_at_ms IS NULL AND expires_at_ms > ?`,
    ),
    open: p(
      `SELECT * FROM import_targets WHERE organization_id = ? AND user_id = ? AND consumed_at_ms IS NULL
        AND expires_at_ms > ? ORDER BY created_at_ms DESC, id DESC`,
    ),
    consumedBy: p('SELECT * FROM import_targets WHERE organization_id = ? AND consumed_enc = ?'),
  };
  return {
    tx: {
      insertImportTarget: (r) =>
        void s.ins.run(
          r.id,
          r.organizationId,
          r.userId,
          r.kind,
          r.publicKey,
          r.sealedKey,
          r.expiresAtMs,
          r.createdAtMs,
          r.consumedAtMs,
          r.consumedEnc,
        ),
      pruneImportTargets: (org, user, kind, keep, nowMs) =>
        s.pruneExpired.run(org, user, nowMs).changes +
        s.prune.run(org, user, kind, org, user, kind, keep).changes,
      consumeImportTarget: (org, user, id, enc, nowMs) =>
        s.consume.run(nowMs, enc, org, user, id, nowMs).changes === 1,
    },
    read: {
      listOpenImportTargets: async (org, user, nowMs) =>
        (s.open.all(org, user, nowMs) as Row[]).map(toImportTarget),
      getImportTargetConsumedBy: async (org, enc) => {
        const r = s.consumedBy.get(org, enc) as Row | undefined;
        return r && toImportTarget(r);
      },
    },
  };
}
// --- end key and wallet import ---

// --- webhooks ---
// Webhook endpoints, the delivery outbox with its attempts, and the webhook signing keys (issue 14);
// spread into the store's transaction and read objects above.
type WebhooksTx = Pick<
  StoreTx,
  | 'insertWebhookEndpoint'
  | 'getWebhookEndpoint'
  | 'countWebhookEndpoints'
  | 'updateWebhookEndpoint'
  | 'deleteWebhookEndpoint'
  | 'enqueueActivityEvent'
  | 'enqueueSendStatusEvent'
  | 'claimWebhookDeliveries'
  | 'recordWebhookAttempt'
  | 'claimWebhookLane'
  | 'releaseWebhookDeliveries'
  | 'redeliverWebhook'
  | 'releaseWebhookLeases'
  | 'insertWebhookSigningKey'
  | 'retireWebhookSigningKeys'
>;
type WebhooksRead = Pick<
  Store,
  | 'listWebhookEndpoints'
  | 'getWebhookEndpoint'
  | 'getWebhookEvent'
  | 'getWebhookDelivery'
  | 'listWebhookDeliveries'
  | 'listWebhookAttempts'
  | 'listWebhookSigningKeys'
  | 'webhookBacklog'
>;

const DELIVERY_COLUMNS = 'd.*, e.event_type AS event_type';

function toWebhookDelivery(r: Row): WebhookDeliveryRecord {
  return {
    id: str(r.id),
    seq: num(r.seq),
    eventId: str(r.event_id),
    eventType: str(r.event_type) as WebhookEventType,
    lane: str(r.lane),
    source: str(r.source) as WebhookDeliverySource,
    endpointId: nstr(r.endpoint_id),
    ownerOrganizationId: str(r.owner_organization_id),
    url: str(r.url),
    state: str(r.state) as WebhookDeliveryState,
    attempts: num(r.attempts),
    nextAttemptAtMs: num(r.next_attempt_at_ms),
    leaseUntilMs: num(r.lease_until_ms),
    windowStartMs: num(r.window_start_ms),
    lastError: nstr(r.last_error),
    deliveredAtMs:
      r.delivered_at_ms === null || r.delivered_at_ms === undefined ? null : num(r.delivered_at_ms),
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  };
}

function webhooksParts(db: Database.Database): { tx: WebhooksTx; read: WebhooksRead } {
  const p = (sql: string) => db.prepare(sql);
  const s = {
    insEndpoint: p(
      'INSERT INTO webhook_endpoints (id, organization_id, url, name, is_active, created_at_ms, updated_at_ms) VALUES (?,?,?,?,?,?,?)',
    ),
    updEndpoint: p(
      'UPDATE webhook_endpoints SET url = ?, name = ?, is_active = ?, updated_at_ms = ? WHERE organization_id = ? AND id = ?',
    ),
    delEndpoint: p('DELETE FROM webhook_endpoints WHERE organization_id = ? AND id = ?'),
    endpoint: p('SELECT * FROM webhook_endpoints WHERE organization_id = ? AND id = ?'),
    endpoints: p('SELECT * FROM webhook_endpoints WHERE organization_id = ? ORDER BY created_at_ms, id'),
    countEndpoints: p('SELECT COUNT(*) AS n FROM webhook_endpoints WHERE organization_id = ?'),
    insSub: p(
      'INSERT INTO webhook_subscriptions (endpoint_id, event_type, filters_json, is_active, position) VALUES (?,?,?,?,?)',
    ),
    delSubs: p('DELETE FROM webhook_subscriptions WHERE endpoint_id = ?'),
    subs: p('SELECT * FROM webhook_subscriptions WHERE endpoint_id = ? ORDER BY position'),
    // Receivers of an event: active endpoints of these organizations with an active subscription.
    subscribers: p(
      `SELECT e.id, e.organization_id, e.url FROM webhook_endpoints e
         JOIN webhook_subscriptions s ON s.endpoint_id = e.id
       WHERE e.organization_id IN (SELECT value FROM json_each(?)) AND e.is_active = 1
         AND s.event_type = ? AND s.is_active = 1
       ORDER BY e.created_at_ms, e.id`,
    ),
    feature: p(
      "SELECT value FROM organization_features WHERE organization_id = ? AND name = 'FEATURE_NAME_WEBHOOK'",
    ),
    org: p('SELECT parent_id FROM organizations WHERE id = ?'),
    activity: p('SELECT * FROM activities WHERE id = ?'),
    send: p('SELECT * FROM send_transactions WHERE id = ?'),
    insEvent: p(
      'INSERT INTO webhook_events (id, organization_id, event_type, subject_id, snapshot_json, body_json, created_at_ms) VALUES (?,?,?,?,?,?,?)',
    ),
    event: p('SELECT * FROM webhook_events WHERE id = ?'),
    setEventBody: p('UPDATE webhook_events SET body_json = ? WHERE id = ? AND body_json IS NULL'),
    insDelivery: p(
      `INSERT INTO webhook_deliveries (id, event_id, lane, source, endpoint_id, owner_organization_id, url, state,
         attempts, next_attempt_at_ms, lease_until_ms, window_start_ms, created_at_ms, updated_at_ms)
       VALUES (?,?,?,?,?,?,?,'PENDING',0,?,0,?,?,?)`,
    ),
    delivery: p(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE d.id = ?`,
    ),
    // Lane heads: the oldest pending delivery of each lane, when due and not leased.
    heads: p(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d
         JOIN (SELECT lane, MIN(seq) AS seq FROM webhook_deliveries WHERE state = 'PENDING' GROUP BY lane) h
           ON h.seq = d.seq
         JOIN webhook_events e ON e.id = d.event_id
       WHERE d.next_attempt_at_ms <= ? AND d.lease_until_ms <= ?
         AND d.lane NOT IN (SELECT value FROM json_each(?))
       ORDER BY d.next_attempt_at_ms, d.seq LIMIT ?`,
    ),
    laneHeads: p(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
       WHERE d.lane = ? AND d.state = 'PENDING' ORDER BY d.seq LIMIT ?`,
    ),
    release: p("UPDATE webhook_deliveries SET lease_until_ms = 0 WHERE id = ? AND state = 'PENDING'"),
    lease: p(
      "UPDATE webhook_deliveries SET lease_until_ms = ? WHERE id = ? AND state = 'PENDING' AND lease_until_ms <= ?",
    ),
    finish: p(
      `UPDATE webhook_deliveries SET state = ?, attempts = ?, next_attempt_at_ms = ?, lease_until_ms = 0,
         last_error = ?, delivered_at_ms = COALESCE(?, delivered_at_ms), updated_at_ms = ?
       WHERE id = ? AND state = 'PENDING'`,
    ),
    insAttempt: p(
      `INSERT INTO webhook_attempts (delivery_id, attempt, started_at_ms, latency_ms, status_code, outcome, error, signing_key_id)
       VALUES (?,?,?,?,?,?,?,?)`,
    ),
    attempts: p('SELECT * FROM webhook_attempts WHERE delivery_id = ? ORDER BY attempt'),
    followUrl: p("UPDATE webhook_deliveries SET url = ? WHERE lane = ? AND state = 'PENDING'"),
    orphan: p(
      `UPDATE webhook_deliveries SET state = 'FAILED', lease_until_ms = 0, last_error = 'the endpoint was deleted',
         updated_at_ms = ? WHERE lane = ? AND state = 'PENDING'`,
    ),
    redeliver: p(
      `UPDATE webhook_deliveries SET state = 'PENDING', next_attempt_at_ms = ?, lease_until_ms = 0, window_start_ms = ?,
         updated_at_ms = ? WHERE id = ? AND state <> 'PENDING'`,
    ),
    releaseLeases: p(
      "UPDATE webhook_deliveries SET lease_until_ms = 0 WHERE state = 'PENDING' AND lease_until_ms > 0",
    ),
    deliveries: p(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
       WHERE d.owner_organization_id = ? AND d.seq < ?
         AND (? IS NULL OR d.endpoint_id = ?) AND (? IS NULL OR d.state = ?) AND (? IS NULL OR d.event_id = ?)
       ORDER BY d.seq DESC LIMIT ?`,
    ),
    seqOf: p('SELECT seq FROM webhook_deliveries WHERE id = ?'),
    backlog: p(
      `SELECT COUNT(*) AS pending,
         MIN(CASE WHEN next_attempt_at_ms <= ? THEN next_attempt_at_ms END) AS oldest_due,
         MIN(next_attempt_at_ms) AS next_due
       FROM webhook_deliveries WHERE state = 'PENDING'`,
    ),
    insKey: p(
      'INSERT INTO webhook_signing_keys (id, public_key, sealed_key, created_at_ms, retired_at_ms) VALUES (?,?,?,?,?)',
    ),
    retireKeys: p(
      'UPDATE webhook_signing_keys SET retired_at_ms = ? WHERE id <> ? AND retired_at_ms IS NULL',
    ),
    keys: p('SELECT * FROM webhook_signing_keys ORDER BY created_at_ms, id'),
  };
  const get = (st: Database.Statement, ...a: unknown[]) => st.get(...a) as Row | undefined;
  const all = (st: Database.Statement, ...a: unknown[]) => st.all(...a) as Row[];

  const toEndpoint = (r: Row): WebhookEndpointRecord => ({
    id: str(r.id),
    organizationId: str(r.organization_id),
    url: str(r.url),
    name: str(r.name),
    isActive: num(r.is_active) === 1,
    subscriptions: all(s.subs, r.id).map((x) => ({
      eventType: str(x.event_type) as WebhookEventType,
      filtersJson: nstr(x.filters_json),
      isActive: num(x.is_active) === 1,
    })),
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  });
  const getEndpoint = (org: string, id: string) => {
    const r = get(s.endpoint, org, id);
    return r && toEndpoint(r);
  };
  const insertSubs = (r: WebhookEndpointRecord) =>
    r.subscriptions.forEach((x, i) => s.insSub.run(r.id, x.eventType, x.filtersJson, x.isActive ? 1 : 0, i));
  const endpointLane = (id: string) => `endpoint:${id}`;

  /** The organization and its parent (a parent's receivers get its sub-organizations' events). */
  const scopeOf = (org: string): string[] => {
    const parent = nstr(get(s.org, org)?.parent_id);
    return parent === null ? [org] : [org, parent];
  };

  const insertEvent = (
    org: string,
    type: WebhookEventType,
    subjectId: string,
    snapshot: string,
    body: string | null,
    nowMs: number,
  ): string => {
    const id = randomUUID();
    s.insEvent.run(id, org, type, subjectId, snapshot, body, nowMs);
    return id;
  };
  const insertDelivery = (
    eventId: string,
    lane: string,
    source: WebhookDeliverySource,
    endpointId: string | null,
    owner: string,
    url: string,
    nowMs: number,
  ) =>
    s.insDelivery.run(
      randomUUID(),
      eventId,
      lane,
      source,
      endpointId,
      owner,
      url,
      nowMs,
      nowMs,
      nowMs,
      nowMs,
    );

  const lease = (rows: Row[], nowMs: number, leaseUntilMs: number): WebhookDeliveryRecord[] =>
    rows
      .filter((r) => s.lease.run(leaseUntilMs, r.id, nowMs).changes === 1)
      .map((r) => ({ ...toWebhookDelivery(r), leaseUntilMs }));

  const claimLane = (lane: string, nowMs: number, leaseUntilMs: number, limit: number) => {
    const out: WebhookDeliveryRecord[] = [];
    for (const r of all(s.laneHeads, lane, limit)) {
      if (num(r.next_attempt_at_ms) > nowMs) break;
      const [leased] = lease([r], nowMs, leaseUntilMs);
      if (leased === undefined) break;
      out.push(leased);
    }
    return out;
  };

  return {
    tx: {
      insertWebhookEndpoint: (r) => {
        s.insEndpoint.run(
          r.id,
          r.organizationId,
          r.url,
          r.name,
          r.isActive ? 1 : 0,
          r.createdAtMs,
          r.updatedAtMs,
        );
        insertSubs(r);
      },
      getWebhookEndpoint: getEndpoint,
      countWebhookEndpoints: (org) => num(get(s.countEndpoints, org)?.n ?? 0),
      updateWebhookEndpoint: (r) => {
        if (
          s.updEndpoint.run(r.url, r.name, r.isActive ? 1 : 0, r.updatedAtMs, r.organizationId, r.id)
            .changes !== 1
        )
          return false;
        s.delSubs.run(r.id);
        insertSubs(r);
        s.followUrl.run(r.url, endpointLane(r.id));
        return true;
      },
      deleteWebhookEndpoint: (org, id, nowMs) => {
        if (get(s.endpoint, org, id) === undefined) return false;
        s.orphan.run(nowMs, endpointLane(id));
        s.delSubs.run(id);
        return s.delEndpoint.run(org, id).changes === 1;
      },
      enqueueActivityEvent: (activityId, created, nowMs) => {
        const row = get(s.activity, activityId);
        if (row === undefined) throw new Error(`activity ${activityId} is not in this transaction`);
        const a = toActivity(row);
        const scope = scopeOf(a.organizationId);
        const endpoints = all(s.subscribers, JSON.stringify(scope), 'ACTIVITY_UPDATES');
        const features = created
          ? scope.flatMap((org) => {
              const f = get(s.feature, org);
              return f === undefined ? [] : [{ org, url: str(f.value) }];
            })
          : [];
        if (endpoints.length === 0 && features.length === 0) return 0;
        const eventId = insertEvent(
          a.organizationId,
          'ACTIVITY_UPDATES',
          a.id,
          JSON.stringify(a),
          null,
          nowMs,
        );
        for (const e of endpoints)
          insertDelivery(
            eventId,
            endpointLane(str(e.id)),
            'ENDPOINT',
            str(e.id),
            str(e.organization_id),
            str(e.url),
            nowMs,
          );
        for (const f of features) {
          // Deliveries still waiting follow the feature's current URL (as an endpoint's follow an update).
          s.followUrl.run(f.url, `feature:${f.org}`);
          insertDelivery(eventId, `feature:${f.org}`, 'FEATURE', null, f.org, f.url, nowMs);
        }
        return endpoints.length + features.length;
      },
      enqueueSendStatusEvent: (sendId, nowMs) => {
        const row = get(s.send, sendId);
        if (row === undefined) throw new Error(`send ${sendId} is not in this transaction`);
        const send = toSend(row);
        // A gap filler is the service's own transaction, not a send anyone asked for.
        if (send.kind === 'GAP_FILL') return 0;
        // turnkey-api.md 11.1: send-status events are scoped to the billing (top-level) organization.
        const parent = nstr(get(s.org, send.organizationId)?.parent_id);
        const billing = parent ?? send.organizationId;
        const endpoints = all(s.subscribers, JSON.stringify([billing]), 'SEND_TRANSACTION_STATUS_UPDATES');
        if (endpoints.length === 0) return 0;
        const body = JSON.stringify({
          type: 'transaction:status',
          organizationId: send.organizationId,
          parentOrganizationId: billing,
          msg: {
            sendTransactionStatusId: send.id,
            activityId: send.activityId,
            status: send.status,
            caip2: send.caip2,
            timestamp: String(Math.floor(send.updatedAtMs / 1000)),
            ...(send.status === 'INCLUDED' ? { txHash: send.txHash } : {}),
            ...(send.status === 'FAILED'
              ? {
                  error: {
                    message: send.errorMessage ?? 'the transaction failed',
                    ...(send.revertChainJson === null
                      ? {}
                      : { eth: { revertChain: JSON.parse(send.revertChainJson) as unknown } }),
                  },
                }
              : {}),
          },
        });
        const eventId = insertEvent(
          send.organizationId,
          'SEND_TRANSACTION_STATUS_UPDATES',
          send.id,
          body,
          body,
          nowMs,
        );
        for (const e of endpoints)
          insertDelivery(
            eventId,
            endpointLane(str(e.id)),
            'ENDPOINT',
            str(e.id),
            str(e.organization_id),
            str(e.url),
            nowMs,
          );
        return endpoints.length;
      },
      claimWebhookDeliveries: (nowMs, leaseUntilMs, limit, busy) =>
        lease(all(s.heads, nowMs, nowMs, JSON.stringify(busy), limit), nowMs, leaseUntilMs),
      recordWebhookAttempt: (result) => {
        const a = result.attempt;
        const d = get(s.delivery, a.deliveryId);
        if (d === undefined) return;
        s.insAttempt.run(
          a.deliveryId,
          a.attempt,
          a.startedAtMs,
          a.latencyMs,
          a.statusCode,
          a.outcome,
          a.error,
          a.signingKeyId,
        );
        s.setEventBody.run(result.bodyJson, str(d.event_id));
        s.finish.run(
          result.state,
          a.attempt,
          result.nextAttemptAtMs,
          a.error,
          result.state === 'DELIVERED' ? a.startedAtMs + a.latencyMs : null,
          a.startedAtMs + a.latencyMs,
          a.deliveryId,
        );
      },
      claimWebhookLane: claimLane,
      releaseWebhookDeliveries: (ids) => ids.forEach((id) => s.release.run(id)),
      redeliverWebhook: (owners, id, nowMs) => {
        const d = get(s.delivery, id);
        if (d === undefined || !owners.includes(str(d.owner_organization_id))) return undefined;
        s.redeliver.run(nowMs, nowMs, nowMs, id);
        const after = get(s.delivery, id);
        return after && toWebhookDelivery(after);
      },
      releaseWebhookLeases: () => s.releaseLeases.run().changes,
      insertWebhookSigningKey: (r) =>
        void s.insKey.run(r.id, r.publicKey, r.sealedKey, r.createdAtMs, r.retiredAtMs),
      retireWebhookSigningKeys: (keep, nowMs) => s.retireKeys.run(nowMs, keep).changes,
    },
    read: {
      listWebhookEndpoints: async (org) => all(s.endpoints, org).map(toEndpoint),
      getWebhookEndpoint: async (org, id) => getEndpoint(org, id),
      getWebhookEvent: async (id) => {
        const r = get(s.event, id);
        return (
          r && {
            id: str(r.id),
            organizationId: str(r.organization_id),
            eventType: str(r.event_type) as WebhookEventType,
            subjectId: str(r.subject_id),
            snapshotJson: str(r.snapshot_json),
            bodyJson: nstr(r.body_json),
            createdAtMs: num(r.created_at_ms),
          }
        );
      },
      getWebhookDelivery: async (id) => {
        const r = get(s.delivery, id);
        return r && toWebhookDelivery(r);
      },
      listWebhookDeliveries: async (owner, f, page) => {
        const before =
          page.before === undefined ? Number.MAX_SAFE_INTEGER : num(get(s.seqOf, page.before)?.seq ?? 0);
        const e = f.endpointId ?? null;
        const st = f.state ?? null;
        const ev = f.eventId ?? null;
        return all(s.deliveries, owner, before, e, e, st, st, ev, ev, page.limit).map(toWebhookDelivery);
      },
      listWebhookAttempts: async (id) =>
        all(s.attempts, id).map((r) => ({
          deliveryId: str(r.delivery_id),
          attempt: num(r.attempt),
          startedAtMs: num(r.started_at_ms),
          latencyMs: num(r.latency_ms),
          statusCode: r.status_code === null || r.status_code === undefined ? null : num(r.status_code),
          outcome: str(r.outcome) as WebhookAttemptOutcome,
          error: nstr(r.error),
          signingKeyId: nstr(r.signing_key_id),
        })),
      listWebhookSigningKeys: async () =>
        all(s.keys).map((r) => ({
          id: str(r.id),
          publicKey: str(r.public_key),
          sealedKey: bytes(r.sealed_key),
          createdAtMs: num(r.created_at_ms),
          retiredAtMs:
            r.retired_at_ms === null || r.retired_at_ms === undefined ? null : num(r.retired_at_ms),
        })),
      webhookBacklog: async (nowMs) => {
        const r = get(s.backlog, nowMs);
        const n = (v: unknown) => (v === null || v === undefined ? null : num(v));
        return {
          pending: num(r?.pending ?? 0),
          oldestDueAtMs: n(r?.oldest_due),
          nextDueAtMs: n(r?.next_due),
        };
      },
    },
  };
}
// --- end webhooks ---
