import { str, num, type Conn, type Row } from '../conn.js';
import { toUser, toAccount } from './records.js';
import { type PrivateKeyRecord, type PrivateKeyTagRecord, type Store, type StoreTx } from '../types.js';

// --- administration ---
// Renames, root quorum changes, deletions, private-key tags and verified contacts (issue 10); spread
// into the transaction and read objects of parts.ts.
export function adminParts(
  db: Conn,
  toKey: (r: Row) => Promise<PrivateKeyRecord>,
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
      renameOrganization: async (id, name) => (await s.renameOrg.run(name, id)).changes === 1,
      setRootQuorum: async (org, threshold, userIds) => {
        await s.clearRoot.run(org);
        for (const id of userIds) await s.setRoot.run(org, id);
        await s.threshold.run(threshold, org);
      },
      listUsersOfOrganization: async (org) => ((await s.users.all(org)) as Row[]).map(toUser),
      renameWallet: async (org, id, name, nowMs) =>
        (await s.renameWallet.run(name, nowMs, org, id)).changes === 1,
      getWalletAccount: async (org, id) => {
        const r = (await s.account.get(org, id)) as Row | undefined;
        return r && toAccount(r);
      },
      deleteWalletAccount: async (org, id) => (await s.delAccount.run(org, id)).changes === 1,
      getPrivateKey: async (org, id) => {
        const r = (await s.key.get(org, id)) as Row | undefined;
        return r && toKey(r);
      },
      deletePrivateKey: async (org, id) => {
        await s.delKeyAddrs.run(org, id);
        return (await s.delKey.run(org, id)).changes === 1;
      },
      renameUserTag: async (org, id, name, nowMs) =>
        (await s.renameTag.run(name, nowMs, org, id)).changes === 1,
      removeUserFromTag: async (tagId, userId) => {
        await s.removeMember.run(tagId, userId);
      },
      deleteUserTag: async (org, id) => {
        const members = ((await s.tagMembers.all(id)) as Row[]).map((r) => str(r.user_id));
        await s.delMembers.run(id);
        return (await s.delTag.run(org, id)).changes === 1 ? members : null;
      },
      insertPrivateKeyTag: async (r) => {
        await s.insKeyTag.run(r.id, r.organizationId, r.name, r.createdAtMs, r.updatedAtMs);
      },
      privateKeyTagNameTaken: async (org, name) => (await s.keyTagName.get(org, name)) !== undefined,
      tagPrivateKey: async (org, keyId, tagId, nowMs) => {
        const r = (await s.keyTags.get(org, keyId)) as Row | undefined;
        if (r === undefined) return;
        const tags = JSON.parse(str(r.tags_json)) as string[];
        if (tags.includes(tagId)) return;
        await s.setKeyTags.run(JSON.stringify([...tags, tagId]), nowMs, org, keyId);
      },
      untagPrivateKey: async (org, keyId, tagId, nowMs) => {
        const r = (await s.keyTags.get(org, keyId)) as Row | undefined;
        if (r === undefined) return;
        const tags = JSON.parse(str(r.tags_json)) as string[];
        if (!tags.includes(tagId)) return;
        await s.setKeyTags.run(JSON.stringify(tags.filter((t) => t !== tagId)), nowMs, org, keyId);
      },
      getPrivateKeyTag: async (org, id) => {
        const r = (await s.keyTag.get(org, id)) as Row | undefined;
        return r && toKeyTag(r);
      },
      renamePrivateKeyTag: async (org, id, name, nowMs) =>
        (await s.renameKeyTag.run(name, nowMs, org, id)).changes === 1,
      deletePrivateKeyTag: async (org, id, nowMs) => {
        if ((await s.delKeyTag.run(org, id)).changes !== 1) return null;
        const keys: string[] = [];
        for (const r of (await s.keyTagsOfKeys.all(org)) as Row[]) {
          const tags = JSON.parse(str(r.tags_json)) as string[];
          if (!tags.includes(id)) continue;
          keys.push(str(r.id));
          await s.setKeyTags.run(JSON.stringify(tags.filter((t) => t !== id)), nowMs, org, str(r.id));
        }
        return keys;
      },
      markContactVerified: async (userId, kind, value, nowMs) => {
        await s.verified.run(userId, kind, kind === 'EMAIL' ? value.toLowerCase() : value, nowMs);
      },
      deleteOrganization: async (id, nowMs) => {
        if ((await s.markDeleted.run(nowMs, id)).changes !== 1) return false;
        for (const st of s.purge) await st.run(id);
        return true;
      },
    },
    read: {
      listPrivateKeyTags: async (org) => ((await s.keyTagsOfOrg.all(org)) as Row[]).map(toKeyTag),
      listVerifiedSubOrganizationIds: async (parentId, filter, page) => {
        const range = [parentId, page.after ?? '', page.before ?? '\uffff'];
        const out =
          filter === undefined
            ? await verifiedAny.all(...range, page.limit)
            : filter.value === undefined
              ? await verifiedBy[filter.kind].any.all(...range, page.limit)
              : await verifiedBy[filter.kind].value.all(...range, filter.value, page.limit);
        return (out as Row[]).map((r) => str(r.id));
      },
    },
  };
}
// --- end administration ---
