import { str, num, type Conn, type Row } from '../conn.js';
import { toUser, toApiKey, toAuthenticator } from './records.js';
import {
  type InvitationRecord,
  type OAuthProviderRecord,
  type Store,
  type StoreTx,
  type UserTagRecord,
} from '../types.js';

// --- users ---
// Users, API keys, OAuth providers, user tags and invitations (issue 4); spread into the store's
// transaction and read objects of parts.ts.
export function usersParts(db: Conn): {
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
      getUser: async (id) => {
        const r = row(await s.user.get(id));
        return r && toUser(r);
      },
      updateUser: async (r) =>
        (await s.updUser.run(r.name, r.email, r.phoneNumber, r.updatedAtMs, r.organizationId, r.id))
          .changes === 1,
      deleteUser: async (org, id) => {
        const r = row(await s.user.get(id));
        if (r === undefined || str(r.organization_id) !== org) return false;
        // Credentials and memberships first: they reference the user (foreign keys).
        await s.delUserKeys.run(id);
        await s.delUserAuths.run(id);
        await s.delUserOauth.run(id);
        await s.delUserTags.run(id);
        return (await s.delUser.run(org, id)).changes === 1;
      },
      listApiKeysOfUser: async (userId) => rows(await s.keysOfUser.all(userId)).map(toApiKey),
      apiKeyPublicKeyTaken: async (org, pub) => (await s.keyTaken.get(org, pub)) !== undefined,
      deleteApiKey: async (userId, id) => (await s.delKey.run(userId, id)).changes === 1,
      authenticatorCredentialTaken: async (org, cred) => (await s.credTaken.get(org, cred)) !== undefined,
      insertOAuthProvider: async (r) => {
        await s.insOauth.run(
          r.id,
          r.userId,
          r.organizationId,
          r.name,
          r.issuer,
          r.audience,
          r.subject,
          r.createdAtMs,
        );
      },
      oauthProviderTaken: async (org, iss, aud, sub) =>
        (await s.oauthTaken.get(org, iss, aud, sub)) !== undefined,
      insertUserTag: async (r) => {
        await s.insTag.run(r.id, r.organizationId, r.name, r.createdAtMs, r.updatedAtMs);
      },
      getUserTag: async (org, id) => {
        const r = row(await s.tag.get(org, id));
        return r && toTag(r);
      },
      userTagNameTaken: async (org, name) => (await s.tagName.get(org, name)) !== undefined,
      setUserTags: async (userId, tagIds) => {
        await s.delUserTags.run(userId);
        for (const t of tagIds) await s.insMember.run(t, userId);
      },
      addUserToTag: async (tagId, userId) => {
        await s.insMember.run(tagId, userId);
      },
      insertInvitation: async (r) => {
        await s.insInvitation.run(
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
        );
      },
      deleteInvitation: async (org, id) => (await s.delInvitation.run(org, id)).changes === 1,
    },
    read: {
      listUserTags: async (org) => rows(await s.tags.all(org)).map(toTag),
      listUserTagIds: async (userId) => rows(await s.tagIdsOfUser.all(userId)).map((r) => str(r.tag_id)),
      listAuthenticators: async (userId) => rows(await s.authsOfUser.all(userId)).map(toAuthenticator),
      listOAuthProviders: async (userId) => rows(await s.oauthOfUser.all(userId)).map(toOauth),
      getApiKey: async (org, id) => {
        const r = row(await s.key.get(org, id));
        return r && toApiKey(r);
      },
      listApiKeysOfOrganization: async (org) => rows(await s.keysOfOrg.all(org)).map(toApiKey),
      getInvitation: async (org, id) => {
        const r = row(await s.invitation.get(org, id));
        return r && toInvitation(r);
      },
    },
  };
}
// --- end users ---
