/**
 * Follows every send that is not terminal: broadcasts INITIALIZED ones (the stored signed bytes,
 * never re-signed), polls receipts of BROADCASTING ones to INCLUDED or FAILED, and re-broadcasts the
 * same bytes when a node seems to have dropped them. On start it picks up what a previous run left,
 * so sends survive a restart.
 */
import { keccak_256 } from '../../shared/keccak.js';
import { BaseError, decodeErrorResult, toHex, type Hex } from 'viem';
import type { Logger } from 'pino';
import { parseSignedTransaction } from '../../../chains/ethereum/index.js';
import { randomUUID } from 'node:crypto';
import { bytesTo0x, hexToBytes, zeroize } from '../../shared/encoding.js';
import type { KeyVault } from '../keys/KeyVault.js';
import type { SendTransactionRecord, SendTransactionUpdate, Store } from '../store/types.js';
import type { EthChain, EthChains } from './chains.js';
import { BATCH_EXECUTOR_RUNTIME_CODE, decodeExecutorRevert } from './batchExecutor.js';
import { classifyBroadcastError } from './classifyBroadcastError.js';
import { suggestFees } from './fillTransaction.js';
import { revertChainOf, type RevertEntry } from './revertChain.js';
import { signEthTransaction } from './signEthTransaction.js';
import { openSponsorKey, type SponsorKey } from './sponsorKey.js';
import { uuidv7 } from '../ids.js';
import { webhookContextOf } from '../webhooks/context.js'; // --- webhooks ---
import { observeSendBacklog } from '../../observability/metrics.js'; // --- operability ---
import { crashPoint } from '../../observability/failpoints.js'; // --- operability ---
import { inSpan, SpanKind } from '../../observability/tracing.js'; // --- operability ---

export interface SendTrackerOptions {
  readonly store: Store;
  readonly chains: EthChains;
  readonly logger: Logger;
  /** Opens the keys that sign gap fillers. */
  readonly vault: KeyVault;
  /** The gas station's sponsor, which fills gaps in its own nonces. */
  readonly sponsor?: SponsorKey | undefined;
  /** How often pending sends are looked at (default 500 ms). */
  readonly intervalMs?: number;
  /** A broadcast send with no receipt after this long is sent again, same bytes (default 15 s). */
  readonly rebroadcastAfterMs?: number;
  /** This tracker's name on the sends it claims (default: a fresh UUID). */
  readonly replicaId?: string;
  /**
   * How long a claim on a send lasts; renewed every round, so a dead replica's sends are taken over
   * by another's tracker this long after it stopped renewing (default 10 s). PostgreSQL only.
   */
  readonly claimLeaseMs?: number;
}

export interface SendTracker {
  /** Looks at one send now (after its commit) instead of at the next tick. */
  kick(id: string): void;
  /** Stops the timer and waits for the round in flight. */
  stop(): Promise<void>;
}

interface RpcReceipt {
  readonly status: Hex;
  readonly blockNumber: Hex;
  readonly gasUsed: Hex;
  readonly logs?: readonly { readonly address: string; readonly topics: readonly string[] }[];
}

/** topic0 of the executor's `BatchExecuted(uint256 indexed nonce, uint256 calls)`. */
const BATCH_EXECUTED_TOPIC = bytesTo0x(
  keccak_256(new TextEncoder().encode('BatchExecuted(uint256,uint256)')),
);

/**
 * True if the receipt shows the account's executor ran this batch. A batch transaction can succeed
 * without running it: if the account's EIP-7702 authorization was skipped (its nonce moved before
 * inclusion), the call lands on an account without code and does nothing.
 */
function batchRan(row: SendTransactionRecord, r: RpcReceipt): boolean {
  const nonceTopic = `0x${(row.gasStationNonce ?? -1n).toString(16).padStart(64, '0')}`;
  return (r.logs ?? []).some(
    (l) =>
      l.address.toLowerCase() === row.accountAddress &&
      l.topics[0]?.toLowerCase() === BATCH_EXECUTED_TOPIC &&
      l.topics[1]?.toLowerCase() === nonceTopic,
  );
}

/** The message of a node's answer, without viem's request dump. */
function messageOf(e: unknown): string {
  if (e instanceof BaseError) return e.details || e.shortMessage;
  return e instanceof Error ? e.message : String(e);
}

/** Revert data a node returned with an eth_call error, if any. */
function revertDataOf(e: unknown): Hex | undefined {
  let found: Hex | undefined;
  const visit = (x: unknown): boolean => {
    const data = (x as { data?: unknown } | null)?.data;
    if (typeof data === 'string' && /^0x[0-9a-fA-F]*$/.test(data)) found = data as Hex;
    return found !== undefined;
  };
  if (e instanceof BaseError) e.walk(visit);
  else visit(e);
  return found;
}

/** A tracker round longer than this is logged: something it waits on is slow. */
const SLOW_ROUND_MS = 10_000;

/** Rounds a "nonce too low" answer is seen without a receipt before the send is failed. */
const NONCE_TOO_LOW_ROUNDS = 3;

/** The JSON-RPC error code of a node's answer, if any. */
function rpcCodeOf(e: unknown): number | undefined {
  let code: number | undefined;
  if (e instanceof BaseError)
    e.walk((x) => {
      const c = (x as { code?: unknown } | null)?.code;
      if (typeof c === 'number') code = c;
      return code !== undefined;
    });
  return code;
}

/** `Error(string)` and `Panic(uint256)` as their text (Solidity ABI); custom errors by selector. */
export function decodeRevert(data: Hex | undefined): string {
  if (data === undefined || data === '0x') return 'execution reverted';
  try {
    const d = decodeErrorResult({ abi: [], data });
    if (d.errorName === 'Error') return `execution reverted: ${String(d.args?.[0])}`;
    if (d.errorName === 'Panic') return `execution reverted: panic ${String(d.args?.[0])}`;
  } catch {
    // not a built-in error: report its selector below
  }
  return `execution reverted: custom error ${data.slice(0, 10)}`;
}

const BROADCAST_SPAN = { kind: SpanKind.CLIENT, attributes: { 'rpc.method': 'eth_sendRawTransaction' } };

export function startSendTracker(opts: SendTrackerOptions): SendTracker {
  const { store, chains, vault, sponsor } = opts;
  const logger = opts.logger;
  const rebroadcastAfterMs = opts.rebroadcastAfterMs ?? 15_000;
  const lastBroadcastMs = new Map<string, number>();
  const nonceTooLowSeen = new Map<string, number>();
  const busy = new Set<string>();
  let stopped = false;
  // --- replicas --- Several replicas' trackers share a PostgreSQL store: each follows only the sends
  // it claimed (FOR UPDATE SKIP LOCKED plus a lease it renews every round). One process serves a
  // SQLite store, so there every pending send is this tracker's.
  const replicated = store.engine === 'postgres';
  const owner = opts.replicaId ?? randomUUID();
  const claimLeaseMs = opts.claimLeaseMs ?? 10_000;
  const CLAIM_LIMIT = 1_000;
  const pendingRows = async (): Promise<SendTransactionRecord[]> => {
    if (!replicated) return store.listPendingSendTransactions();
    const t = Date.now();
    return store.write(
      async (tx) => await tx.claimPendingSendTransactions(owner, t, t + claimLeaseMs, CLAIM_LIMIT),
    );
  };
  const claimOne = async (id: string): Promise<boolean> => {
    if (!replicated) return true;
    const t = Date.now();
    return store.write(async (tx) => await tx.claimSendTransaction(id, owner, t, t + claimLeaseMs));
  };
  // --- end replicas ---

  const update = (row: SendTransactionRecord, u: Omit<SendTransactionUpdate, 'updatedAtMs'>) =>
    store
      .write(async (tx) => {
        const nowMs = Date.now();
        const moved = await tx.updateSendTransaction(row.id, { ...u, updatedAtMs: nowMs });
        if (moved) await tx.enqueueSendStatusEvent(row.id, nowMs); // --- webhooks ---
        return moved;
      })
      .then((moved) => {
        if (moved) webhookContextOf(store).wake(); // --- webhooks ---
        if (moved)
          logger.info(
            { sendTransactionStatusId: row.id, status: u.status, txHash: row.txHash },
            'send moved',
          );
      });

  async function receiptOf(chain: EthChain, row: SendTransactionRecord): Promise<RpcReceipt | null> {
    return (await chain.client.request({
      method: 'eth_getTransactionReceipt',
      params: [row.txHash as Hex],
    })) as RpcReceipt | null;
  }

  /**
   * Replays the call on the state before its block, with that block's number and time (block
   * overrides, so a deadline that passed at inclusion shows), to read the revert reason. A batch is
   * replayed with the executor's code put at the account (a state override): before its first batch
   * the account had not delegated yet, and the executor's own errors say why a batch was refused.
   */
  async function failureReason(
    chain: EthChain,
    row: SendTransactionRecord,
    r: RpcReceipt,
  ): Promise<{ message: string; revertChain?: RevertEntry[] }> {
    const { tx } = parseSignedTransaction(row.signedTransaction);
    const block = BigInt(r.blockNumber);
    const batch = row.kind === 'SPONSORED' || row.kind === 'BATCH';
    const header = (await chain.client.request({
      method: 'eth_getBlockByNumber',
      params: [r.blockNumber, false],
    })) as { timestamp: Hex } | null;
    const call = {
      from: row.fromAddress as Hex,
      ...(tx.to === null ? {} : { to: bytesTo0x(tx.to) }),
      value: toHex(tx.value),
      data: bytesTo0x(tx.data),
      gas: toHex(tx.gasLimit),
    };
    const stateOverride = batch
      ? { [row.accountAddress]: { code: bytesTo0x(BATCH_EXECUTOR_RUNTIME_CODE) } }
      : {};
    const blockOverride = header === null ? {} : { number: r.blockNumber, time: header.timestamp };
    const replay = (withBlock: boolean) =>
      chain.client.request({
        method: 'eth_call',
        params: [
          call,
          toHex(block > 0n ? block - 1n : 0n),
          stateOverride,
          ...(withBlock ? [blockOverride] : []),
        ] as never,
      });
    try {
      await replay(true).catch((e: unknown) => {
        // A node that takes no block overrides (-32602) is asked again without them.
        if (revertDataOf(e) === undefined && rpcCodeOf(e) === -32602) return replay(false);
        throw e;
      });
    } catch (e) {
      const data = revertDataOf(e);
      if (data !== undefined)
        return {
          message: (batch ? decodeExecutorRevert(data) : undefined) ?? decodeRevert(data),
          revertChain: revertChainOf({
            batch,
            account: row.accountAddress,
            to: tx.to,
            data: tx.data,
            revert: data,
            describe: decodeRevert,
          }),
        };
      if (/out of gas/i.test(messageOf(e))) return { message: 'out of gas' };
      return { message: messageOf(e) || 'execution reverted' };
    }
    // The replay succeeded: what differed was the gas (state may differ too, but gas is the usual cause).
    return { message: BigInt(r.gasUsed) >= tx.gasLimit ? 'out of gas' : 'execution reverted' };
  }

  async function settle(chain: EthChain, row: SendTransactionRecord, r: RpcReceipt): Promise<void> {
    const blockNumber = BigInt(r.blockNumber);
    if (BigInt(r.status) === 1n) {
      if (row.kind === 'DIRECT' || row.kind === 'GAP_FILL' || batchRan(row, r))
        return update(row, { status: 'INCLUDED', blockNumber });
      return update(row, {
        status: 'FAILED',
        blockNumber,
        errorMessage: `the batch did not run: ${row.accountAddress} did not delegate to the batch executor when the transaction was included (its EIP-7702 authorization was skipped because the account's nonce had moved)`,
      });
    }
    const reason = await failureReason(chain, row, r).catch(() => ({ message: 'execution reverted' }));
    return update(row, {
      status: 'FAILED',
      blockNumber,
      errorMessage: reason.message,
      ...('revertChain' in reason && reason.revertChain !== undefined
        ? { revertChainJson: JSON.stringify(reason.revertChain) }
        : {}),
    });
  }

  async function broadcast(chain: EthChain, row: SendTransactionRecord): Promise<void> {
    lastBroadcastMs.set(row.id, Date.now());
    try {
      await inSpan(
        'broadcast',
        () =>
          chain.client.request({
            method: 'eth_sendRawTransaction',
            params: [bytesTo0x(row.signedTransaction)],
          }),
        BROADCAST_SPAN,
      );
    } catch (e) {
      const message = messageOf(e);
      const kind = classifyBroadcastError(message);
      switch (kind) {
        case 'ALREADY_KNOWN':
          break;
        case 'NONCE_TOO_LOW': {
          // Our own bytes may be what used the nonce (a re-broadcast after a restart); a node's
          // receipt can lag behind its nonce, so it is looked for over a few rounds before failing.
          const r = await receiptOf(chain, row);
          if (r !== null) return settle(chain, row, r);
          const seen = (nonceTooLowSeen.get(row.id) ?? 0) + 1;
          nonceTooLowSeen.set(row.id, seen);
          if (seen < NONCE_TOO_LOW_ROUNDS) return;
          // Someone else used it. Never re-signed with another nonce; the allocator re-syncs from
          // the chain's pending nonce at its next allocation.
          return update(row, {
            status: 'FAILED',
            errorMessage: `nonce too low: nonce ${row.nonce} of ${row.fromAddress} was already used on ${row.caip2} by another transaction`,
          });
        }
        case 'INSUFFICIENT_FUNDS':
        case 'REJECTED':
          // A gap filler waits for funds: the sends after it cannot land before it anyway.
          if (row.kind === 'GAP_FILL' && kind === 'INSUFFICIENT_FUNDS') {
            logger.warn({ sendTransactionStatusId: row.id, reason: message }, 'gap filler waits for funds');
            return;
          }
          return failBeforeInclusion(
            chain,
            row,
            kind === 'REJECTED' ? `refused by the node: ${message}` : `insufficient funds: ${message}`,
          );
        case 'REPLACEMENT_UNDERPRICED':
        case 'RETRY':
          logger.warn(
            { sendTransactionStatusId: row.id, kind, reason: message },
            'broadcast refused; will retry with the same bytes',
          );
          return;
        default: {
          const never: never = kind;
          throw new Error(`unhandled broadcast error kind ${String(never)}`);
        }
      }
    }
    crashPoint('after-broadcast-before-record'); // --- operability --- (tests only: see failpoints.ts)
    if (row.status === 'INITIALIZED') await update(row, { status: 'BROADCASTING' });
  }

  /**
   * Fails a send the node refused before inclusion and, in the same write, gives its nonces back —
   * or, when later nonces were already handed out, records a zero-value transfer to itself at each
   * nonce that cannot be given back (a gap filler, broadcast like any send), so the sends after it
   * are not stuck behind a nonce that will never be used.
   */
  async function failBeforeInclusion(
    chain: EthChain,
    row: SendTransactionRecord,
    errorMessage: string,
  ): Promise<void> {
    const { tx: sent } = parseSignedTransaction(row.signedTransaction);
    // A self-submitted batch that delegates also took the next nonce for its authorization.
    const nonces = [row.nonce, ...(row.kind === 'BATCH' && sent.type === 'eip7702' ? [row.nonce + 1n] : [])];
    const fees = await suggestFees(chain, { maxFeePerGas: undefined, maxPriorityFeePerGas: undefined });
    const key =
      row.kind === 'SPONSORED'
        ? sponsor === undefined
          ? undefined
          : () => openSponsorKey(vault, sponsor)
        : await store
            .resolveSigningKey(row.organizationId, row.fromAddress)
            .then((rec) => (rec === undefined ? undefined : () => vault.open(rec.sealedKey, rec.recordId)));
    const fillers: string[] = [];
    await store.write(async (tx) => {
      const now = Date.now();
      if (!(await tx.updateSendTransaction(row.id, { status: 'FAILED', errorMessage, updatedAtMs: now })))
        return;
      await tx.enqueueSendStatusEvent(row.id, now); // --- webhooks ---
      // Highest first: each nonce given back makes the one below it the last one taken; once one
      // cannot be given back, neither can any below it.
      const unreleased: bigint[] = [];
      for (const n of [...nonces].reverse()) {
        if (unreleased.length === 0 && (await tx.releaseNonce(row.caip2, row.fromAddress, n))) continue;
        unreleased.push(n);
      }
      // A refused gap filler is not filled again (that would refill the same nonce every round).
      if (unreleased.length === 0 || key === undefined || row.kind === 'GAP_FILL') return;
      const secret = key();
      try {
        for (const nonce of unreleased.reverse()) {
          const signed = signEthTransaction({
            privateKey: secret,
            expectedFrom: row.fromAddress,
            tx: {
              type: 'eip1559',
              chainId: chain.chainId,
              nonce,
              gasLimit: 21_000n,
              ...fees,
              to: hexToBytes(row.fromAddress, 'fromAddress'),
              value: 0n,
              data: new Uint8Array(0),
              accessList: [],
            },
          });
          const id = uuidv7(now);
          await tx.insertSendTransaction({
            id,
            kind: 'GAP_FILL',
            organizationId: row.organizationId,
            activityId: row.activityId,
            caip2: row.caip2,
            fromAddress: row.fromAddress,
            accountAddress: row.fromAddress,
            nonce,
            gasStationNonce: null,
            signedTransaction: signed,
            txHash: bytesTo0x(keccak_256(signed)),
            status: 'INITIALIZED',
            blockNumber: null,
            errorMessage: null,
            revertChainJson: null,
            createdAtMs: now,
            updatedAtMs: now,
          });
          fillers.push(id);
        }
      } finally {
        zeroize(secret);
      }
    });
    logger.info(
      { sendTransactionStatusId: row.id, status: 'FAILED', gapFillers: fillers.length },
      'send moved',
    );
  }

  async function follow(row: SendTransactionRecord): Promise<void> {
    const chain = chains.get(row.caip2);
    if (chain === undefined) return; // endpoint no longer configured: left pending, not lost
    if (row.status === 'INITIALIZED') return broadcast(chain, row);
    const r = await receiptOf(chain, row);
    if (r !== null) crashPoint('in-tracker-round'); // --- operability --- receipt seen, not recorded
    if (r !== null) return settle(chain, row, r);
    if (Date.now() - (lastBroadcastMs.get(row.id) ?? 0) > rebroadcastAfterMs) return broadcast(chain, row);
  }

  async function guarded(row: SendTransactionRecord): Promise<void> {
    if (busy.has(row.id)) return;
    busy.add(row.id);
    try {
      await follow(row);
    } catch (e) {
      logger.warn({ sendTransactionStatusId: row.id, err: messageOf(e) }, 'send tracking step failed');
    } finally {
      busy.delete(row.id);
    }
  }

  /**
   * Two rounds, each on its own timer so neither can hold the other up: broadcasts go per sender in
   * nonce order (a node sees nonce n before n + 1; senders in parallel), while sends already
   * broadcast only need their receipts, fetched all at once (viem batches the JSON-RPC calls), so a
   * long queue of one sender settles in one round and a slow broadcast never delays a receipt.
   */
  async function broadcastRound(): Promise<void> {
    const rows = (await pendingRows()).filter((r) => r.status === 'INITIALIZED');
    const bySender = new Map<string, SendTransactionRecord[]>();
    for (const row of rows) {
      const key = `${row.caip2} ${row.fromAddress}`;
      const list = bySender.get(key) ?? [];
      list.push(row);
      bySender.set(key, list);
    }
    await Promise.all(
      [...bySender.values()].map(async (list) => {
        for (const row of list) await guarded(row);
      }),
    );
  }

  async function receiptRound(): Promise<void> {
    const rows = await pendingRows();
    observeSendBacklog(rows, Date.now()); // --- operability ---
    await Promise.all(rows.filter((r) => r.status !== 'INITIALIZED').map(guarded));
    const pending = new Set(rows.map((r) => r.id));
    for (const id of lastBroadcastMs.keys()) if (!pending.has(id)) lastBroadcastMs.delete(id);
    for (const id of nonceTooLowSeen.keys()) if (!pending.has(id)) nonceTooLowSeen.delete(id);
  }

  const rounds = new Map<string, Promise<void>>();
  const every = (name: string, round: () => Promise<void>) => {
    const timer = setInterval(() => {
      if (rounds.has(name) || stopped) return;
      const started = Date.now();
      rounds.set(
        name,
        round()
          .catch((e: unknown) => logger.warn({ err: messageOf(e), round: name }, 'send tracker round failed'))
          .finally(() => {
            rounds.delete(name);
            const tookMs = Date.now() - started;
            if (tookMs > SLOW_ROUND_MS) logger.warn({ round: name, tookMs }, 'send tracker round was slow');
          }),
      );
    }, opts.intervalMs ?? 500);
    timer.unref();
    return timer;
  };
  const timers = [every('broadcast', broadcastRound), every('receipts', receiptRound)];

  return {
    kick(id) {
      if (stopped) return;
      void store
        .getSendTransactionById(id)
        .then(async (row) =>
          row === undefined || row.status !== 'INITIALIZED' || !(await claimOne(row.id))
            ? undefined
            : guarded(row),
        )
        .catch((e: unknown) => logger.warn({ err: messageOf(e) }, 'send kick failed'));
    },
    async stop() {
      stopped = true;
      for (const t of timers) clearInterval(t);
      await Promise.all(rounds.values());
      while (busy.size > 0) await new Promise((r) => setTimeout(r, 10));
      // Handed over at once rather than when the claims run out.
      if (replicated) await store.write(async (tx) => await tx.releaseSendClaims(owner)).catch(() => 0);
    },
  };
}
