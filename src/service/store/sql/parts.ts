import { sameAddress } from '../../../shared/addressMatch.js';
import { inJsonList, str, num, bytes, b, type Conn, type Row } from '../conn.js';
import {
  activityValues,
  activityUpdateValues,
  ACTIVITY_INSERT_COLUMNS,
  ACTIVITY_UPDATE_SET,
  INSERT_VOTE_SQL,
  voteValues,
  toOrg,
  toUser,
  toApiKey,
  toAuthenticator,
  toWallet,
  toAccount,
  toServiceKey,
  toActivity,
  toVote,
  toPolicy,
  toPolicyEvaluation,
} from './records.js';
import {
  type PrivateKeyRecord,
  type SigningKeyRecord,
  type Store,
  type StoreTx,
  type VoteRecord,
} from '../types.js';
import { usersParts } from './users.js';
import { otherResourcesParts } from './otherResources.js';
import { suborgParts } from './suborgs.js';
import { sendParts } from './sends.js';
import { adminParts } from './admin.js';
import { importParts } from './imports.js';
import { webhooksParts } from './webhooks.js';
import { authProxyParts } from './authProxy.js'; // --- auth proxy ---
import { oauthParts } from './oauth.js'; // --- oauth ---
import { replicaParts } from './replicas.js'; // --- replicas ---

/** Every store module's transaction and read methods over one connection. */
export function storeParts(db: Conn): {
  tx: StoreTx;
  read: Omit<Store, 'write' | 'synced' | 'close' | 'exclusive' | 'engine'>;
} {
  const q = (sql: string) => db.prepare(sql);

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
      `INSERT INTO activities (${ACTIVITY_INSERT_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
    ),
    insVote: q(INSERT_VOTE_SQL),
    // app_proofs_json is kept unless the update brings proofs; a move ends any lease on the row.
    updActivity: q(`UPDATE activities SET ${ACTIVITY_UPDATE_SET} WHERE id = ? AND status = ?`),
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
    rootOrg: q(
      'SELECT * FROM organizations WHERE parent_id IS NULL AND deleted_at_ms IS NULL ORDER BY created_at_ms, id LIMIT 1',
    ),
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
      // A reservation (PENDING, being signed under a lease) is listed once it has an outcome.
      `SELECT * FROM activities WHERE organization_id = ? AND id < ? AND status <> 'ACTIVITY_STATUS_PENDING'
         AND (CAST(? AS TEXT) IS NULL OR ${inJsonList(db, 'status')})
         AND (CAST(? AS TEXT) IS NULL OR ${inJsonList(db, 'type')})
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

  const toKey = async (r: Row): Promise<PrivateKeyRecord> => ({
    id: str(r.id),
    organizationId: str(r.organization_id),
    name: str(r.name),
    curve: str(r.curve),
    publicKey: str(r.public_key),
    sealedKey: bytes(r.sealed_key),
    addresses: (await s.keyAddrs.all(r.id)).map((a) => ({ format: str(a.format), address: str(a.address) })),
    tags: JSON.parse(str(r.tags_json)) as string[],
    exported: num(r.exported) === 1,
    imported: num(r.imported) === 1,
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  });

  const insertVote = async (v: VoteRecord): Promise<void> => {
    await s.insVote.run(...voteValues(v));
  };

  const users = usersParts(db); // --- users ---
  const otherResources = otherResourcesParts(db); // --- other resources ---
  const suborgs = suborgParts(db); // --- sub-organizations and sessions ---
  const sends = sendParts(db); // --- eth send transaction ---
  const admin = adminParts(db, toKey); // --- administration ---
  const imports = importParts(db); // --- key and wallet import ---
  const webhooks = webhooksParts(db); // --- webhooks ---
  const authProxy = authProxyParts(db); // --- auth proxy ---
  const oauth = oauthParts(db); // --- oauth ---
  const replicas = replicaParts(db); // --- replicas ---
  const tx: StoreTx = {
    ...replicas.tx, // --- replicas ---
    ...webhooks.tx, // --- webhooks ---
    ...authProxy.tx, // --- auth proxy ---
    ...oauth.tx, // --- oauth ---
    ...admin.tx, // --- administration ---
    ...imports.tx, // --- key and wallet import ---
    ...sends.tx, // --- eth send transaction ---
    ...suborgs.tx, // --- sub-organizations and sessions ---
    ...otherResources.tx, // --- other resources ---
    ...users.tx, // --- users ---
    insertOrganization: async (r) => {
      await s.insOrg.run(r.id, r.name, r.parentId, r.rootQuorumThreshold, r.createdAtMs);
    },
    insertUser: async (r) => {
      await s.insUser.run(
        r.id,
        r.organizationId,
        r.name,
        r.email,
        r.phoneNumber,
        b(r.isRoot),
        r.createdAtMs,
        r.updatedAtMs,
      );
    },
    insertApiKey: async (r) => {
      await s.insApiKey.run(
        r.id,
        r.userId,
        r.organizationId,
        r.name,
        r.publicKey,
        r.curve,
        r.expiresAtMs,
        r.createdAtMs,
      );
    },
    insertAuthenticator: async (r) => {
      await s.insAuth.run(
        r.id,
        r.userId,
        r.organizationId,
        r.name,
        r.credentialId,
        r.publicKey,
        r.createdAtMs,
      );
    },
    insertWallet: async (r) => {
      await s.insWallet.run(
        r.id,
        r.organizationId,
        r.name,
        r.sealedMnemonic,
        b(r.exported),
        b(r.imported),
        r.createdAtMs,
        r.updatedAtMs,
      );
    },
    insertWalletAccount: async (r) => {
      await s.insAccount.run(
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
      );
    },
    insertPrivateKey: async (r) => {
      await s.insKey.run(
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
      for (const [i, a] of r.addresses.entries())
        await s.insKeyAddr.run(r.id, r.organizationId, a.format, a.address, a.address.toLowerCase(), i);
    },
    insertVote: async (v) => await insertVote(v),
    updateActivity: async (id, expected, u) =>
      (await s.updActivity.run(...activityUpdateValues(u), id, expected)).changes === 1,
    insertPolicy: async (r) => {
      await s.insPolicy.run(
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
      );
    },
    updatePolicy: async (r) =>
      (
        await s.updPolicy.run(
          r.name,
          r.effect,
          r.condition,
          r.consensus,
          r.time,
          r.notes,
          r.updatedAtMs,
          r.organizationId,
          r.id,
        )
      ).changes === 1,
    deletePolicy: async (org, id) => (await s.delPolicy.run(org, id)).changes === 1,
    getPolicy: async (org, id) => {
      const r = await s.policy.get(org, id);
      return r && toPolicy(r);
    },
    policyNameTaken: async (org, name, exceptId) =>
      (await s.policyName.get(org, name, exceptId ?? '')) !== undefined,
    insertPolicyEvaluation: async (r) => {
      await s.insEvaluation.run(
        r.id,
        r.activityId,
        r.organizationId,
        r.voteId,
        r.outcome,
        r.resultsJson,
        r.createdAtMs,
      );
    },
    insertActivity: async (r, votes) => {
      await s.insActivity.run(...activityValues(r));
      for (const v of votes) await insertVote(v);
    },
    walletNameTaken: async (org, name) => (await s.walletName.get(org, name)) !== undefined,
    privateKeyNameTaken: async (org, name) => (await s.keyName.get(org, name)) !== undefined,
    walletAccountExists: async (w, c, p, f) => (await s.accountExists.get(w, c, p, f)) !== undefined,
    getWallet: async (org, id) => {
      const r = await s.wallet.get(org, id);
      return r && toWallet(r);
    },
    markWalletExported: async (org, id, nowMs) => (await s.walletExported.run(nowMs, org, id)).changes === 1,
    markPrivateKeyExported: async (org, id, nowMs) => (await s.keyExported.run(nowMs, org, id)).changes === 1,
    deleteWallet: async (org, id) => {
      // Accounts first: they reference the wallet (foreign key), and their rows hold the sealed keys.
      await s.delAccounts.run(org, id);
      return (await s.delWallet.run(org, id)).changes === 1;
    },
    insertServiceKeyIfAbsent: async (r) => {
      await s.insServiceKey.run(r.id, r.publicKey, r.sealedKey, r.createdAtMs);
      const stored = await s.serviceKey.get(r.id);
      if (stored === undefined) throw new Error(`service key ${r.id} vanished after insert`);
      return toServiceKey(stored);
    },
  };

  const read: Omit<Store, 'write' | 'synced' | 'close' | 'exclusive' | 'engine'> = {
    ...replicas.read, // --- replicas ---
    ...webhooks.read, // --- webhooks ---
    ...authProxy.read, // --- auth proxy ---
    ...oauth.read, // --- oauth ---
    ...admin.read, // --- administration ---
    ...imports.read, // --- key and wallet import ---
    ...sends.read, // --- eth send transaction ---
    ...suborgs.read, // --- sub-organizations and sessions ---
    ...otherResources.read, // --- other resources ---
    ...users.read, // --- users ---
    getRootOrganization: async () => {
      const r = await s.rootOrg.get();
      return r && toOrg(r);
    },
    getOrganization: async (id) => {
      const r = await s.org.get(id);
      return r && toOrg(r);
    },
    getUser: async (id) => {
      const r = await s.user.get(id);
      return r && toUser(r);
    },
    listUsers: async (org) => (await s.users.all(org)).map(toUser),
    listApiKeys: async (userId) => (await s.apiKeysOfUser.all(userId)).map(toApiKey),
    findApiKeys: async (pub, orgs) =>
      (await s.apiKeysByPub.all(pub)).map(toApiKey).filter((k) => orgs.includes(k.organizationId)),
    findAuthenticators: async (cred, orgs) =>
      (await s.authsByCred.all(cred)).map(toAuthenticator).filter((a) => orgs.includes(a.organizationId)),
    getWallet: async (org, id) => {
      const r = await s.wallet.get(org, id);
      return r && toWallet(r);
    },
    listWallets: async (org) => (await s.wallets.all(org)).map(toWallet),
    getWalletAccountByAddress: async (org, wallet, address) => {
      const r = await s.accountByAddr.get(org, wallet, address.toLowerCase());
      return r && sameAddress(address, str(r.address)) ? toAccount(r) : undefined;
    },
    getWalletAccountByPath: async (org, wallet, path) => {
      const r = await s.accountByPath.get(org, wallet, path);
      return r && toAccount(r);
    },
    listWalletAccounts: async (org, wallet, page) =>
      (wallet === undefined
        ? await s.accountsAll.all(org, page.after ?? '', page.limit)
        : await s.accountsOfWallet.all(org, wallet, page.after ?? '', page.limit)
      ).map(toAccount),
    getPrivateKey: async (org, id) => {
      const r = await s.key.get(org, id);
      return r && toKey(r);
    },
    listPrivateKeys: async (org) => Promise.all((await s.keys.all(org)).map(toKey)),
    resolveSigningKey: async (org, signWith): Promise<SigningKeyRecord | undefined> => {
      const byId = await s.key.get(org, signWith);
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
      const acc = await s.accountBySignAddr.get(org, lc);
      if (acc && sameAddress(signWith, str(acc.address)))
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
      const key = await s.keyByAddr.get(org, lc);
      if (key && sameAddress(signWith, str(key.matched_address)))
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
      const r = await s.activity.get(org, id);
      return r && toActivity(r);
    },
    getActivityByFingerprint: async (fp) => {
      const r = await s.activityByFp.get(fp);
      return r && toActivity(r);
    },
    listVotes: async (activityId) => (await s.votes.all(activityId)).map(toVote),
    listActivities: async (org, page, filter = {}) => {
      const statuses = filter.statuses === undefined ? null : JSON.stringify(filter.statuses);
      const types = filter.types === undefined ? null : JSON.stringify(filter.types);
      return (
        await s.activities.all(org, page.before ?? '\uffff', statuses, statuses, types, types, page.limit)
      ).map(toActivity);
    },
    getPolicy: async (org, id) => {
      const r = await s.policy.get(org, id);
      return r && toPolicy(r);
    },
    listPolicies: async (org) => (await s.policies.all(org)).map(toPolicy),
    listPolicyEvaluations: async (activityId) =>
      (await s.evaluations.all(activityId)).map(toPolicyEvaluation),
    getServiceKey: async (id) => {
      const r = await s.serviceKey.get(id);
      return r && toServiceKey(r);
    },
  };
  return { tx, read };
}
