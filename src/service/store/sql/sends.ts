import { str, num, nstr, type Conn, type Row } from '../conn.js';
import { toSend } from './records.js';
import {
  type SendTransactionRecord,
  type SendTransactionStatus,
  type Store,
  type StoreTx,
} from '../types.js';

// --- eth send transaction ---
// The nonce allocator and send-status rows of eth_send_transaction (issue 5); spread into the
// transaction and read objects of parts.ts. The allocator reads and increments inside the write,
// holding the counter's row (SQLite: the one writer; PostgreSQL: FOR UPDATE) until the commit, so
// two sends, on one replica or two, never read the same counter.
export function sendParts(db: Conn): {
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
    // The allocator's row, locked for the rest of the transaction where the engine has row locks:
    // two replicas allocating for one address take turns (SQLite has one writer anyway).
    nextLocked: p(
      `SELECT next_nonce FROM eth_nonce_allocations WHERE caip2 = ? AND address = ?${db.dialect === 'postgres' ? ' FOR UPDATE' : ''}`,
    ),
    claimRow: p(
      "INSERT INTO eth_nonce_allocations (caip2, address, next_nonce) VALUES (?,?,'0') ON CONFLICT (caip2, address) DO NOTHING",
    ),
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
      // Ties in time fall back to the order of a send's life (the engines keep no insertion order).
      `SELECT status, error_message, at_ms FROM send_transaction_transitions WHERE send_id = ?
       ORDER BY at_ms, CASE status WHEN 'INITIALIZED' THEN 0 WHEN 'BROADCASTING' THEN 1 ELSE 2 END`,
    ),
    getById: p('SELECT * FROM send_transactions WHERE id = ?'),
    pending: p(
      "SELECT * FROM send_transactions WHERE status IN ('INITIALIZED', 'BROADCASTING') ORDER BY LENGTH(nonce), nonce, created_at_ms",
    ),
  };
  const nextOf = async (caip2: string, address: string): Promise<bigint | undefined> => {
    const r = await s.next.get(caip2, address);
    return r === undefined ? undefined : BigInt(str(r.next_nonce));
  };
  /** The stored next nonce, its row created (as 0) if absent and locked until the commit. */
  const lockNext = async (caip2: string, address: string): Promise<bigint> => {
    await s.claimRow.run(caip2, address);
    const r = await s.nextLocked.get(caip2, address);
    return r === undefined ? 0n : BigInt(str(r.next_nonce));
  };
  return {
    tx: {
      allocateNonce: async (caip2, address, chainPending, given) => {
        const stored = await lockNext(caip2, address);
        const nonce = given ?? (chainPending > stored ? chainPending : stored);
        const next = nonce + 1n > stored ? nonce + 1n : stored;
        await s.setNext.run(caip2, address, next.toString());
        return nonce;
      },
      nextNonce: (caip2, address) => nextOf(caip2, address.toLowerCase()),
      releaseNonce: async (caip2, address, nonce) => {
        if ((await lockNext(caip2, address)) !== nonce + 1n) return false;
        await s.setNext.run(caip2, address, nonce.toString());
        return true;
      },
      insertSendTransaction: async (r: SendTransactionRecord) => {
        await s.transition.run(r.id, r.status, r.errorMessage, r.createdAtMs);
        await s.ins.run(
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
      updateSendTransaction: async (id, u) => {
        const moved =
          (
            await s.upd.run(
              u.status,
              u.blockNumber === undefined ? null : u.blockNumber.toString(),
              u.errorMessage ?? null,
              u.revertChainJson ?? null,
              u.updatedAtMs,
              id,
            )
          ).changes === 1;
        if (moved) await s.transition.run(id, u.status, u.errorMessage ?? null, u.updatedAtMs);
        return moved;
      },
    },
    read: {
      getSendTransaction: async (org, id) => {
        const r = (await s.get.get(org, id)) as Row | undefined;
        return r && toSend(r);
      },
      getSendTransactionById: async (id) => {
        const r = (await s.getById.get(id)) as Row | undefined;
        return r && toSend(r);
      },
      listPendingSendTransactions: async () => ((await s.pending.all()) as Row[]).map(toSend),
      getNextNonce: async (caip2, address) => nextOf(caip2, address.toLowerCase()),
      listSendTransactionTransitions: async (id) =>
        ((await s.transitions.all(id)) as Row[]).map((r) => ({
          status: str(r.status) as SendTransactionStatus,
          errorMessage: nstr(r.error_message),
          atMs: num(r.at_ms),
        })),
    },
  };
}
// --- end eth send transaction ---
