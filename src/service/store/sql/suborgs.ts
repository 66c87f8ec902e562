import { str, type Conn, type Row } from '../conn.js';
import { type LoginSessionRecord, type Store, type StoreTx } from '../types.js';

// --- sub-organizations and sessions ---
// Sub-organization listing, stamp_login session keys and used verification tokens (issue 4); spread
// into the transaction and read objects of parts.ts.
export function suborgParts(db: Conn): {
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
      insertLoginSession: async (r: LoginSessionRecord) => {
        await s.insSession.run(r.apiKeyId, r.userId, r.organizationId, r.expiresAtMs, r.createdAtMs);
      },
      deleteLoginSessionKeys: async (userId) => {
        const ids = ((await s.sessionKeys.all(userId)) as Row[]).map((r) => str(r.api_key_id));
        for (const id of ids) {
          await s.delSession.run(id);
          await s.delKey.run(id);
        }
        return ids;
      },
      consumeVerificationToken: async (id, org, nowMs) =>
        (await s.useToken.run(id, org, nowMs)).changes === 1,
      subOrganizationNameTaken: async (parentId, name) => (await s.subName.get(parentId, name)) !== undefined,
    },
    read: {
      listSubOrganizationIds: async (parentId, filter, page) => {
        const range = [parentId, page.after ?? '', page.before ?? '\uffff'];
        const out =
          filter === undefined
            ? await filters.NONE.all(...range, page.limit)
            : await filters[filter.type].all(...range, filter.value, page.limit);
        return (out as Row[]).map((r) => str(r.id));
      },
    },
  };
}
// --- end sub-organizations and sessions ---
