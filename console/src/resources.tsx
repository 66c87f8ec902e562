/** Read-only views: policies with their evaluations, users/keys/wallets, webhook endpoints and deliveries. */
import { useState } from 'preact/hooks';
import { query, type Session } from './api.js';
import { Failure } from './alert.js';
import { useLoad } from './load.js';

interface Policy {
  policyId: string;
  policyName: string;
  effect: string;
  condition?: string;
  consensus?: string;
  notes?: string;
}

export function PoliciesPage(props: { session: Session }) {
  const { session } = props;
  const policies = useLoad(() => query<{ policies: Policy[] }>(session, 'list_policies'), []);
  const [activityId, setActivityId] = useState('');
  const [asked, setAsked] = useState<string>();
  const evaluations = useLoad(
    async () =>
      asked === undefined
        ? undefined
        : query<{
            policyEvaluations: {
              outcome: string;
              policyEvaluations: unknown;
              createdAt: { seconds: string };
            }[];
          }>(session, 'get_policy_evaluations', { activityId: asked }),
    [asked],
  );
  return (
    <div class="stack">
      <h1>Policies</h1>
      <Failure error={policies.error} />
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Effect</th>
            <th scope="col">Condition</th>
            <th scope="col">Consensus</th>
          </tr>
        </thead>
        <tbody>
          {(policies.value?.policies ?? []).map((p) => (
            <tr key={p.policyId}>
              <td>{p.policyName}</td>
              <td>{p.effect}</td>
              <td>
                <code>{p.condition ?? ''}</code>
              </td>
              <td>
                <code>{p.consensus ?? ''}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <section aria-labelledby="evaluations-heading">
        <h2 id="evaluations-heading">Evaluations of an activity</h2>
        <form
          class="filters"
          onSubmit={(e) => {
            e.preventDefault();
            setAsked(activityId.trim());
          }}
        >
          <label>
            Activity id
            <input value={activityId} onInput={(e) => setActivityId(e.currentTarget.value)} />
          </label>
          <button type="submit">Show evaluations</button>
        </form>
        <Failure error={evaluations.error} />
        {evaluations.value !== undefined && (
          <pre>{JSON.stringify(evaluations.value.policyEvaluations, null, 2)}</pre>
        )}
      </section>
    </div>
  );
}

interface OrgData {
  organizationData: {
    name: string;
    users: {
      userId: string;
      userName: string;
      apiKeys: { apiKeyName: string; credential: { publicKey: string } }[];
    }[];
    wallets: { walletId: string; walletName: string }[];
    privateKeys: { privateKeyId: string; privateKeyName: string; curve: string }[];
    rootQuorum: { threshold: number; userIds: string[] };
  };
}

export function OrganizationPage(props: { session: Session }) {
  const org = useLoad(() => query<OrgData>(props.session, 'get_organization'), []);
  const d = org.value?.organizationData;
  return (
    <div class="stack">
      <h1>Organization{d === undefined ? '' : `: ${d.name}`}</h1>
      <Failure error={org.error} />
      <h2>Users</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Root</th>
            <th scope="col">API keys</th>
          </tr>
        </thead>
        <tbody>
          {(d?.users ?? []).map((u) => (
            <tr key={u.userId}>
              <td>{u.userName}</td>
              <td>{d?.rootQuorum.userIds.includes(u.userId) === true ? 'yes' : 'no'}</td>
              <td>{u.apiKeys.map((k) => k.apiKeyName).join(', ')}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Wallets</h2>
      <ul>
        {(d?.wallets ?? []).map((w) => (
          <li key={w.walletId}>
            {w.walletName} <code>{w.walletId}</code>
          </li>
        ))}
      </ul>
      <h2>Private keys</h2>
      <ul>
        {(d?.privateKeys ?? []).map((k) => (
          <li key={k.privateKeyId}>
            {k.privateKeyName} ({k.curve})
          </li>
        ))}
      </ul>
    </div>
  );
}

export function WebhooksPage(props: { session: Session }) {
  const endpoints = useLoad(
    () =>
      query<{ webhookEndpoints?: { endpointId?: string; name?: string; url?: string }[] }>(
        props.session,
        'list_webhook_endpoints',
      ),
    [],
  );
  const deliveries = useLoad(
    () => query<{ deliveries: unknown[] }>(props.session, 'list_webhook_deliveries', { limit: 20 }),
    [],
  );
  return (
    <div class="stack">
      <h1>Webhooks</h1>
      <Failure error={endpoints.error} />
      <h2>Endpoints</h2>
      <pre>{JSON.stringify(endpoints.value?.webhookEndpoints ?? [], null, 2)}</pre>
      <h2>Recent deliveries</h2>
      <Failure error={deliveries.error} />
      <pre>{JSON.stringify(deliveries.value?.deliveries ?? [], null, 2)}</pre>
    </div>
  );
}
