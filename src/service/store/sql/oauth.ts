import { str, type Conn, type Row } from '../conn.js';
import type { Store, StoreTx } from '../types.js';

// --- oauth ---
// Users found by an OAuth provider's (issuer, audience, subject) and provider deletion (issue 13);
// spread into the transaction and read objects of parts.ts.
export function oauthParts(db: Conn): {
  tx: Pick<StoreTx, 'deleteOAuthProvider'>;
  read: Pick<Store, 'findOAuthProviderUsers'>;
} {
  const p = (sql: string) => db.prepare(sql);
  const s = {
    del: p('DELETE FROM oauth_providers WHERE user_id = ? AND id = ?'),
    // The organization itself and its live sub-organizations; oldest registration first.
    find: p(
      `SELECT op.organization_id, op.user_id FROM oauth_providers op
       JOIN organizations o ON o.id = op.organization_id
       WHERE (o.id = ? OR o.parent_id = ?) AND o.deleted_at_ms IS NULL
         AND op.issuer = ? AND op.audience = ? AND op.subject = ?
       ORDER BY op.created_at_ms, op.id LIMIT 100`,
    ),
  };
  return {
    tx: {
      deleteOAuthProvider: async (userId, id) => (await s.del.run(userId, id)).changes === 1,
    },
    read: {
      findOAuthProviderUsers: async (organizationId, issuer, audience, subject) =>
        ((await s.find.all(organizationId, organizationId, issuer, audience, subject)) as Row[]).map((r) => ({
          organizationId: str(r.organization_id),
          userId: str(r.user_id),
        })),
    },
  };
}
// --- end oauth ---
