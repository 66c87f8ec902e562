/** The countersign web console (issue 17): sign-in with a passkey, activities, approvals, read-only org views, AUTH. */
import { Failure } from './alert.js';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { hostIsIpAddress, loadSession, redeemInvite, saveSession, type Session } from './api.js';
import { ActivitiesPage } from './activities.js';
import { PoliciesPage, OrganizationPage, WebhooksPage } from './resources.js';
import { AuthProxyPage } from './auth-proxy.js';

const PAGES = ['Activities', 'Policies', 'Organization', 'Webhooks', 'Auth proxy'] as const;
type Page = (typeof PAGES)[number];

function IpAddressNotice() {
  const port = location.port === '' ? '' : `:${location.port}`;
  return (
    <main>
      <h1>The console cannot run at an IP address</h1>
      <p role="alert">
        Passkeys (WebAuthn) refuse IP addresses as relying-party ids, so this console cannot sign in at{' '}
        <code>{location.host}</code>. Open <code>{`http://localhost${port}/console/`}</code> on this machine,
        or serve it at a host name with <code>--console-origin</code>.
      </p>
    </main>
  );
}

function Invite(props: { onSignedIn: (s: Session) => void }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const fragment = location.hash.slice(1);
  const register = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const s = await redeemInvite(fragment);
      history.replaceState(null, '', '/console/');
      props.onSignedIn(s);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main>
      <h1>Welcome to the countersign console</h1>
      <p>This one-time link registers a passkey on this device for your user and signs you in.</p>
      <button class="primary" onClick={register} disabled={busy}>
        Register a passkey
      </button>
      <Failure error={error} />
    </main>
  );
}

function SignedOut() {
  return (
    <main>
      <h1>countersign console</h1>
      <p>
        You are not signed in on this device. Ask an operator for an invite link (
        <code>countersign console invite --user-name NAME</code>) and open it here.
      </p>
    </main>
  );
}

function App() {
  const [session, setSession] = useState<Session | undefined>(loadSession);
  const [page, setPage] = useState<Page>('Activities');
  useEffect(() => saveSession(session), [session]);
  if (hostIsIpAddress(location.hostname)) return <IpAddressNotice />;
  if (location.pathname.startsWith('/console/invite'))
    return (
      <Invite
        onSignedIn={(s) => {
          setSession(s);
          setPage('Activities');
        }}
      />
    );
  if (session === undefined) return <SignedOut />;
  return (
    <>
      <header>
        <strong>countersign</strong>
        <nav aria-label="Console sections">
          <ul>
            {PAGES.map((p) => (
              <li key={p}>
                <button aria-current={p === page ? 'page' : undefined} onClick={() => setPage(p)}>
                  {p}
                </button>
              </li>
            ))}
          </ul>
        </nav>
        <span>Signed in as {session.userName}</span>
        <button onClick={() => setSession(undefined)}>Sign out</button>
      </header>
      <main>
        {page === 'Activities' && <ActivitiesPage session={session} />}
        {page === 'Policies' && <PoliciesPage session={session} />}
        {page === 'Organization' && <OrganizationPage session={session} />}
        {page === 'Webhooks' && <WebhooksPage session={session} />}
        {page === 'Auth proxy' && <AuthProxyPage session={session} />}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
