/** Activities: pending approvals described in words (approve/reject with the passkey), a filterable list, one's detail. */
import { useEffect, useState } from 'preact/hooks';
import { decodeFunctionData, erc20Abi, formatEther, parseTransaction, type Hex } from 'viem';
import { query, submit, type Activity, type Session } from './api.js';
import { Failure } from './alert.js';
import { useLoad } from './load.js';

const STATUSES = [
  'ACTIVITY_STATUS_COMPLETED',
  'ACTIVITY_STATUS_CONSENSUS_NEEDED',
  'ACTIVITY_STATUS_REJECTED',
  'ACTIVITY_STATUS_FAILED',
  'ACTIVITY_STATUS_PENDING',
];
/** Approvals are refreshed this often while the page is open (each refresh is a stamped query). */
const LIVE_MS = 5_000;

const short = (t: string) =>
  t
    .replace(/^ACTIVITY_(TYPE|STATUS)_/, '')
    .toLowerCase()
    .replace(/_/g, ' ');
const when = (a: Activity) => new Date(Number(a.createdAt.seconds) * 1000);

interface PolicyRow {
  policyId: string;
  policyName: string;
}
interface Evaluation {
  outcome: string;
  policyEvaluations: { policyId: string; outcome: string }[];
}

/** What a signing request would do, in words. */
function describeIntent(a: Activity): { label: string; value: string }[] {
  const intent = Object.values(a.intent)[0] ?? {};
  const rows: { label: string; value: string }[] = [{ label: 'Request', value: short(a.type) }];
  const signWith = intent.signWith;
  if (typeof signWith === 'string') rows.push({ label: 'Signed by', value: signWith });
  const raw = intent.unsignedTransaction;
  if (typeof raw === 'string') {
    try {
      const hexTx = (raw.startsWith('0x') ? raw : `0x${raw}`) as Hex;
      const tx = parseTransaction(hexTx);
      rows.push({
        label: 'Chain',
        value: tx.chainId === undefined ? 'unspecified' : `EVM chain ${tx.chainId}`,
      });
      rows.push({ label: 'To', value: tx.to ?? 'contract creation' });
      rows.push({ label: 'Value', value: `${formatEther(tx.value ?? 0n)} ETH` });
      if (tx.data !== undefined && tx.data !== '0x') {
        try {
          const call = decodeFunctionData({ abi: erc20Abi, data: tx.data });
          rows.push({
            label: 'Call',
            value: `${call.functionName}(${(call.args ?? []).map(String).join(', ')})`,
          });
        } catch {
          rows.push({ label: 'Call data', value: tx.data });
        }
      } else rows.push({ label: 'Call', value: 'none (a plain transfer)' });
    } catch {
      rows.push({ label: 'Transaction', value: raw });
    }
  }
  for (const [k, v] of Object.entries(intent))
    if (!['signWith', 'unsignedTransaction'].includes(k) && typeof v !== 'object')
      rows.push({ label: k, value: String(v) });
  return rows;
}

function Pending(props: {
  session: Session;
  activity: Activity;
  policies: readonly PolicyRow[];
  onVoted: () => void;
}) {
  const { session, activity: a } = props;
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const evaluations = useLoad(
    () => query<{ policyEvaluations: Evaluation[] }>(session, 'get_policy_evaluations', { activityId: a.id }),
    [a.id, a.votes.length],
  );
  const asked = new Set<string>();
  for (const e of evaluations.value?.policyEvaluations ?? [])
    for (const p of e.policyEvaluations)
      if (p.outcome === 'OUTCOME_REQUIRES_CONSENSUS') asked.add(p.policyId);
  const names = [...asked].map((id) => props.policies.find((p) => p.policyId === id)?.policyName ?? id);
  const vote = async (approve: boolean) => {
    setBusy(true);
    setError(undefined);
    try {
      await submit(
        session,
        approve ? 'approve_activity' : 'reject_activity',
        approve ? 'ACTIVITY_TYPE_APPROVE_ACTIVITY' : 'ACTIVITY_TYPE_REJECT_ACTIVITY',
        { fingerprint: a.fingerprint },
      );
      props.onVoted();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const headingId = `pending-${a.id}`;
  return (
    <article class="card" aria-labelledby={headingId}>
      <h3 id={headingId}>
        {short(a.type)} requested {when(a).toLocaleString()}
      </h3>
      <dl>
        {describeIntent(a).map((r) => (
          <>
            <dt>{r.label}</dt>
            <dd>
              <code>{r.value}</code>
            </dd>
          </>
        ))}
        <dt>Policy asking for consensus</dt>
        <dd>{names.length > 0 ? names.join(', ') : evaluations.loading ? 'loading…' : 'none recorded'}</dd>
        <dt>Votes so far</dt>
        <dd>
          {a.votes
            .map(
              (v) => `${v.user?.userName ?? v.userId}: ${short(v.selection.replace('VOTE_SELECTION_', ''))}`,
            )
            .join('; ')}
        </dd>
      </dl>
      <div class="actions">
        <button class="primary" disabled={busy} onClick={() => void vote(true)}>
          Approve
        </button>
        <button disabled={busy} onClick={() => void vote(false)}>
          Reject
        </button>
      </div>
      <Failure error={error} />
    </article>
  );
}

function Detail(props: { activity: Activity; onClose: () => void }) {
  const a = props.activity;
  return (
    <section class="card" aria-labelledby="activity-detail">
      <h2 id="activity-detail">Activity {a.id}</h2>
      <dl>
        <dt>Type</dt>
        <dd>{a.type}</dd>
        <dt>Status</dt>
        <dd>{a.status}</dd>
        <dt>Created</dt>
        <dd>{when(a).toLocaleString()}</dd>
        <dt>Fingerprint</dt>
        <dd>
          <code>{a.fingerprint}</code>
        </dd>
      </dl>
      <h3>Intent</h3>
      <pre>{JSON.stringify(a.intent, null, 2)}</pre>
      <h3>Result</h3>
      <pre>{JSON.stringify(a.result, (k, v) => (k === 'activity' ? undefined : v), 2)}</pre>
      <h3>Votes</h3>
      <pre>
        {JSON.stringify(
          a.votes.map((v) => ({ user: v.user?.userName ?? v.userId, selection: v.selection })),
          null,
          2,
        )}
      </pre>
      <button onClick={props.onClose}>Close detail</button>
    </section>
  );
}

export function ActivitiesPage(props: { session: Session }) {
  const { session } = props;
  const [tick, setTick] = useState(0);
  const [type, setType] = useState('');
  const [status, setStatus] = useState('');
  const [user, setUser] = useState('');
  const [since, setSince] = useState('');
  const [selected, setSelected] = useState<Activity>();
  const list = useLoad(
    () =>
      query<{ activities: Activity[] }>(session, 'list_activities', { paginationOptions: { limit: '100' } }),
    [tick],
  );
  // Live updates: re-read while the page is open and visible.
  useEffect(() => {
    const t = setInterval(() => {
      if (document.visibilityState === 'visible') setTick((n) => n + 1);
    }, LIVE_MS);
    return () => clearInterval(t);
  }, []);
  const all = list.value?.activities ?? [];
  const pending = all.filter((a) => a.status === 'ACTIVITY_STATUS_CONSENSUS_NEEDED');
  // Policy names for the pending ones: read again when the set of pending activities changes.
  const policies = useLoad(
    () => query<{ policies: PolicyRow[] }>(session, 'list_policies'),
    [pending.map((a) => a.id).join()],
  );
  const types = [...new Set(all.map((a) => a.type))].sort();
  const users = [...new Set(all.map((a) => a.votes[0]?.user?.userName ?? a.votes[0]?.userId ?? ''))].filter(
    Boolean,
  );
  const sinceMs = since === '' ? undefined : new Date(since).getTime();
  const shown = all.filter(
    (a) =>
      (type === '' || a.type === type) &&
      (status === '' || a.status === status) &&
      (user === '' || (a.votes[0]?.user?.userName ?? a.votes[0]?.userId) === user) &&
      (sinceMs === undefined || when(a).getTime() >= sinceMs),
  );
  return (
    <div class="stack">
      <h1>Activities</h1>
      <Failure error={list.error} />
      <section aria-labelledby="pending-heading">
        <h2 id="pending-heading">Pending approvals ({pending.length})</h2>
        {pending.length === 0 && <p>Nothing waits for a vote.</p>}
        {pending.map((a) => (
          <Pending
            key={a.id}
            session={session}
            activity={a}
            policies={policies.value?.policies ?? []}
            onVoted={() => setTick((n) => n + 1)}
          />
        ))}
      </section>
      <section aria-labelledby="all-heading">
        <h2 id="all-heading">All activities</h2>
        <div class="filters" role="group" aria-label="Filter activities">
          <label>
            Type
            <select value={type} onChange={(e) => setType(e.currentTarget.value)}>
              <option value="">any</option>
              {types.map((t) => (
                <option value={t}>{short(t)}</option>
              ))}
            </select>
          </label>
          <label>
            Status
            <select value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
              <option value="">any</option>
              {STATUSES.map((s) => (
                <option value={s}>{short(s)}</option>
              ))}
            </select>
          </label>
          <label>
            User
            <select value={user} onChange={(e) => setUser(e.currentTarget.value)}>
              <option value="">any</option>
              {users.map((u) => (
                <option value={u}>{u}</option>
              ))}
            </select>
          </label>
          <label>
            Since
            <input type="datetime-local" value={since} onInput={(e) => setSince(e.currentTarget.value)} />
          </label>
          <button onClick={() => setTick((n) => n + 1)}>Refresh</button>
        </div>
        <table>
          <caption class="visually-hidden">Activities, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Created</th>
              <th scope="col">Type</th>
              <th scope="col">Status</th>
              <th scope="col">User</th>
              <th scope="col">Detail</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((a) => (
              <tr key={a.id}>
                <td>{when(a).toLocaleString()}</td>
                <td>{short(a.type)}</td>
                <td>{short(a.status)}</td>
                <td>{a.votes[0]?.user?.userName ?? a.votes[0]?.userId ?? ''}</td>
                <td>
                  <button onClick={() => setSelected(a)} aria-label={`Show activity ${a.id}`}>
                    Show
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {list.loading && all.length === 0 && <p>Loading…</p>}
      </section>
      {selected !== undefined && <Detail activity={selected} onClose={() => setSelected(undefined)} />}
    </div>
  );
}
