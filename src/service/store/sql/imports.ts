import { type Conn, type Row } from '../conn.js';
import { toImportTarget } from './records.js';
import { type Store, type StoreTx } from '../types.js';

// --- key and wallet import ---
// The one-time target keys of init_import_wallet / init_import_private_key (issue 10); spread into
// the transaction and read objects of parts.ts. Consumption is one conditional UPDATE inside the
// write that also inserts the imported wallet or key, so a bundle imports at most once.
export function importParts(db: Conn): {
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
      insertImportTarget: async (r) => {
        await s.ins.run(
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
        );
      },
      pruneImportTargets: async (org, user, kind, keep, nowMs) =>
        (await s.pruneExpired.run(org, user, nowMs)).changes +
        (await s.prune.run(org, user, kind, org, user, kind, keep)).changes,
      consumeImportTarget: async (org, user, id, enc, nowMs) =>
        (await s.consume.run(nowMs, enc, org, user, id, nowMs)).changes === 1,
    },
    read: {
      listOpenImportTargets: async (org, user, nowMs) =>
        ((await s.open.all(org, user, nowMs)) as Row[]).map(toImportTarget),
      getImportTargetConsumedBy: async (org, enc) => {
        const r = (await s.consumedBy.get(org, enc)) as Row | undefined;
        return r && toImportTarget(r);
      },
    },
  };
}
// --- end key and wallet import ---
