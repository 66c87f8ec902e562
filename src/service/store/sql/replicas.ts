import { inJsonList, nnum, nstr, type Conn, type Row } from '../conn.js';
import {
  activityValues,
  activityUpdateValues,
  ACTIVITY_UPDATE_SET,
  ACTIVITY_INSERT_COLUMNS,
  INSERT_VOTE_SQL,
  toActivity,
  toSend,
  voteValues,
} from './records.js';
import type { ActivityLease, Store, StoreTx } from '../types.js';

// --- replicas ---
// Activity reservations and leases, and the send tracker's claims (issue 11); spread into the
// transaction and read objects of parts.ts. Every decision between replicas is a statement the
// database settles: a unique fingerprint, a conditional update, a row lock.
export function replicaParts(db: Conn): {
  tx: Pick<
    StoreTx,
    | 'reserveActivity'
    | 'leaseActivity'
    | 'releaseActivityLease'
    | 'lockActivity'
    | 'completeLeasedActivity'
    | 'abandonActivity'
    | 'expireActivityLeases'
    | 'claimPendingSendTransactions'
    | 'claimSendTransaction'
    | 'releaseSendClaims'
  >;
  read: Pick<Store, 'getActivityLease'>;
} {
  const p = (sql: string) => db.prepare(sql);
  const pg = db.dialect === 'postgres';
  const s = {
    reserve: p(
      `INSERT INTO activities (${ACTIVITY_INSERT_COLUMNS}, lease_owner, lease_expires_at_ms)
       VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (fingerprint) DO NOTHING`,
    ),
    insVote: p(INSERT_VOTE_SQL),
    lease: p(
      `UPDATE activities SET lease_owner = ?, lease_expires_at_ms = ?
       WHERE id = ? AND status = ? AND (lease_owner IS NULL OR lease_owner = ? OR lease_expires_at_ms <= ?)`,
    ),
    release: p(
      'UPDATE activities SET lease_owner = NULL, lease_expires_at_ms = NULL WHERE id = ? AND lease_owner = ?',
    ),
    lock: p(`SELECT * FROM activities WHERE id = ?${pg ? ' FOR UPDATE' : ''}`),
    complete: p(
      `UPDATE activities SET ${ACTIVITY_UPDATE_SET} WHERE id = ? AND status = 'ACTIVITY_STATUS_PENDING' AND lease_owner = ?`,
    ),
    byFp: p('SELECT * FROM activities WHERE fingerprint = ?'),
    owned: p(
      "SELECT id FROM activities WHERE id = ? AND lease_owner = ? AND status = 'ACTIVITY_STATUS_PENDING'",
    ),
    delEvaluations: p('DELETE FROM policy_evaluations WHERE activity_id = ?'),
    delVotes: p('DELETE FROM votes WHERE activity_id = ?'),
    delActivity: p('DELETE FROM activities WHERE id = ?'),
    expire: p(
      'UPDATE activities SET lease_expires_at_ms = 0 WHERE lease_owner IS NOT NULL AND lease_expires_at_ms > 0',
    ),
    // Candidates: pending sends free to claim. On PostgreSQL the rows are locked as they are read,
    // skipping those another replica's claim holds right now, so two trackers never take one row.
    claimable: p(
      `SELECT id FROM send_transactions WHERE status IN ('INITIALIZED', 'BROADCASTING')
         AND (claimed_by IS NULL OR claimed_by = ? OR claim_expires_at_ms <= ?)
       ORDER BY LENGTH(nonce), nonce, created_at_ms LIMIT ?${pg ? ' FOR UPDATE SKIP LOCKED' : ''}`,
    ),
    claim: p(
      `UPDATE send_transactions SET claimed_by = ?, claim_expires_at_ms = ?
       WHERE ${inJsonList(db, 'id')} AND status IN ('INITIALIZED', 'BROADCASTING')`,
    ),
    claimOne: p(
      `UPDATE send_transactions SET claimed_by = ?, claim_expires_at_ms = ?
       WHERE id = ? AND status IN ('INITIALIZED', 'BROADCASTING')
         AND (claimed_by IS NULL OR claimed_by = ? OR claim_expires_at_ms <= ?)`,
    ),
    claimed: p(
      `SELECT * FROM send_transactions WHERE claimed_by = ? AND status IN ('INITIALIZED', 'BROADCASTING')
       ORDER BY LENGTH(nonce), nonce, created_at_ms`,
    ),
    releaseSends: p(
      'UPDATE send_transactions SET claimed_by = NULL, claim_expires_at_ms = 0 WHERE claimed_by = ?',
    ),
  };
  const toLease = (r: Row): ActivityLease => ({
    activity: toActivity(r),
    leaseOwner: nstr(r.lease_owner),
    leaseExpiresAtMs: nnum(r.lease_expires_at_ms),
  });
  return {
    tx: {
      reserveActivity: async (r, votes, owner, leaseUntilMs) => {
        const inserted = (await s.reserve.run(...activityValues(r), owner, leaseUntilMs)).changes === 1;
        if (!inserted) return false;
        for (const v of votes) await s.insVote.run(...voteValues(v));
        return true;
      },
      leaseActivity: async (id, status, owner, nowMs, leaseUntilMs) =>
        (await s.lease.run(owner, leaseUntilMs, id, status, owner, nowMs)).changes === 1,
      releaseActivityLease: async (id, owner) => {
        await s.release.run(id, owner);
      },
      lockActivity: async (id) => {
        const r = await s.lock.get(id);
        return r && toLease(r);
      },
      completeLeasedActivity: async (id, owner, u) =>
        (await s.complete.run(...activityUpdateValues(u), id, owner)).changes === 1,
      abandonActivity: async (id, owner) => {
        if ((await s.owned.get(id, owner)) === undefined) return false;
        await s.delEvaluations.run(id);
        await s.delVotes.run(id);
        await s.delActivity.run(id);
        return true;
      },
      expireActivityLeases: async () => (await s.expire.run()).changes,
      claimPendingSendTransactions: async (owner, nowMs, leaseUntilMs, limit) => {
        const ids = (await s.claimable.all(owner, nowMs, limit)).map((r) => r.id);
        if (ids.length > 0) await s.claim.run(owner, leaseUntilMs, JSON.stringify(ids));
        return (await s.claimed.all(owner)).map(toSend);
      },
      claimSendTransaction: async (id, owner, nowMs, leaseUntilMs) =>
        (await s.claimOne.run(owner, leaseUntilMs, id, owner, nowMs)).changes === 1,
      releaseSendClaims: async (owner) => (await s.releaseSends.run(owner)).changes,
    },
    read: {
      getActivityLease: async (fingerprint) => {
        const r = await s.byFp.get(fingerprint);
        return r && toLease(r);
      },
    },
  };
}
// --- end replicas ---
