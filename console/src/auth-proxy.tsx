/**
 * AUTH section: the auth proxy's configuration, each change saved through the auth-proxy activities
 * (enable_auth_proxy, update_auth_proxy_config, disable_auth_proxy; read with get_auth_proxy_config).
 */
import { Failure } from './alert.js';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, query, submit, type Session } from './api.js';

interface AuthProxyConfig {
  configId?: string;
  enabled?: boolean;
  allowedOrigins?: string[];
  sessionExpirationSeconds?: string;
  otpLength?: number;
  otpAlphanumeric?: boolean;
  otpExpirationSeconds?: string;
  appName?: string;
  emailTemplate?: string;
  smsTemplate?: string;
  enabledProviders?: string[];
  oauthClientIds?: Record<string, string> | string[];
}

const lines = (s: string) =>
  s
    .split(/[\n,]/)
    .map((x) => x.trim())
    .filter((x) => x !== '');

/** An allowed origin is an exact URL origin or `*`; `https://*.example.com` and the like are refused. */
export function originProblem(origin: string): string | undefined {
  if (origin === '*') return undefined;
  if (origin.includes('*')) return `${origin} is a partial wildcard: list each origin exactly, or * for any`;
  try {
    const u = new URL(origin);
    if (u.origin !== origin) return `${origin} is not an exact origin (scheme://host[:port], no path)`;
  } catch {
    return `${origin} is not a URL`;
  }
  return undefined;
}

/** `provider=clientId` lines (one per provider) as the provider → client id map the service keeps. */
function clientIdMap(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')) {
    const at = line.indexOf('=');
    if (at > 0) out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return out;
}

/** A template with its placeholders filled in, as the proxy would send it. */
function preview(template: string, appName: string, otpLength: number): string {
  return template
    .replace(/\{\{\s*appName\s*\}\}/g, appName || 'your app')
    .replace(/\{\{\s*(\.OtpCode|otpCode|code)\s*\}\}/g, '1234567890'.slice(0, otpLength));
}

export function AuthProxyPage(props: { session: Session }) {
  const { session } = props;
  const [config, setConfig] = useState<AuthProxyConfig>();
  const [loadError, setLoadError] = useState<string>();
  const [origins, setOrigins] = useState('');
  const [sessionSeconds, setSessionSeconds] = useState('900');
  const [otpLength, setOtpLength] = useState(6);
  const [otpAlphanumeric, setOtpAlphanumeric] = useState(false);
  const [otpSeconds, setOtpSeconds] = useState('300');
  const [appName, setAppName] = useState('');
  const [emailTemplate, setEmailTemplate] = useState('');
  const [smsTemplate, setSmsTemplate] = useState('');
  const [providers, setProviders] = useState('');
  const [clientIds, setClientIds] = useState('');
  const [error, setError] = useState<string>();
  const [saved, setSaved] = useState<string>();
  const [busy, setBusy] = useState(false);

  const load = async () => {
    try {
      const out = await query<{ authProxyConfig: AuthProxyConfig }>(session, 'get_auth_proxy_config');
      const c = out.authProxyConfig;
      setConfig(c);
      setOrigins((c.allowedOrigins ?? []).join('\n'));
      if (c.sessionExpirationSeconds !== undefined) setSessionSeconds(c.sessionExpirationSeconds);
      if (c.otpLength !== undefined) setOtpLength(c.otpLength);
      setOtpAlphanumeric(c.otpAlphanumeric === true);
      if (c.otpExpirationSeconds !== undefined) setOtpSeconds(c.otpExpirationSeconds);
      setAppName(c.appName ?? '');
      setEmailTemplate(c.emailTemplate ?? '');
      setSmsTemplate(c.smsTemplate ?? '');
      setProviders((c.enabledProviders ?? []).join('\n'));
      setClientIds(
        Array.isArray(c.oauthClientIds)
          ? c.oauthClientIds.join('\n')
          : Object.entries(c.oauthClientIds ?? {})
              .map(([provider, id]) => `${provider}=${id}`)
              .join('\n'),
      );
      setLoadError(undefined);
    } catch (e) {
      // Never enabled: nothing to read yet, and Save enables it.
      if (e instanceof ApiError && e.status === 404) {
        setConfig(undefined);
        setLoadError(undefined);
      } else setLoadError((e as Error).message);
    }
  };
  useEffect(() => void load(), []);

  const originList = lines(origins);
  const originErrors = originList.map(originProblem).filter((x): x is string => x !== undefined);

  const run = async (what: string, f: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    setSaved(undefined);
    try {
      await f();
      setSaved(what);
      await load();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const save = () => {
    if (originErrors.length > 0) return;
    void run('Saved', async () => {
      if (config?.enabled !== true)
        await submit(session, 'enable_auth_proxy', 'ACTIVITY_TYPE_ENABLE_AUTH_PROXY', {});
      await submit(session, 'update_auth_proxy_config', 'ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG', {
        allowedOrigins: originList,
        sessionExpirationSeconds: sessionSeconds,
        otpLength,
        otpAlphanumeric,
        otpExpirationSeconds: otpSeconds,
        // Empty fields keep the stored value (the service refuses an empty name or template).
        ...(appName.trim() === '' ? {} : { appName }),
        ...(emailTemplate.trim() === '' ? {} : { emailTemplate }),
        ...(smsTemplate.trim() === '' ? {} : { smsTemplate }),
        enabledProviders: lines(providers),
        oauthClientIds: clientIdMap(clientIds),
      });
    });
  };
  const disable = () =>
    void run('Disabled', () => submit(session, 'disable_auth_proxy', 'ACTIVITY_TYPE_DISABLE_AUTH_PROXY', {}));

  return (
    <div class="stack">
      <h1>Auth proxy</h1>
      <p>
        {config === undefined
          ? 'The auth proxy is not configured yet.'
          : `Config ${config.configId ?? ''}: ${config.enabled === true ? 'enabled' : 'disabled'}.`}
      </p>
      {loadError !== undefined && (
        <p class="error" role="status">
          Could not read the configuration: {loadError}
        </p>
      )}
      <form
        class="card stack"
        onSubmit={(e) => {
          e.preventDefault();
          save();
        }}
      >
        <label>
          Allowed origins
          <textarea
            rows={3}
            value={origins}
            aria-describedby="origins-help origins-error"
            aria-invalid={originErrors.length > 0}
            onInput={(e) => setOrigins(e.currentTarget.value)}
          />
        </label>
        <small id="origins-help">One exact origin per line, such as https://app.example.com.</small>
        <div id="origins-error" role="alert" class="error">
          {originErrors.join('. ')}
        </div>
        <label>
          Session expiration (seconds)
          <input
            inputMode="numeric"
            value={sessionSeconds}
            onInput={(e) => setSessionSeconds(e.currentTarget.value)}
          />
        </label>
        <label>
          OTP length
          <input
            type="number"
            min={6}
            max={9}
            value={otpLength}
            onInput={(e) => setOtpLength(Number(e.currentTarget.value))}
          />
        </label>
        <label class="inline">
          <input
            type="checkbox"
            checked={otpAlphanumeric}
            onChange={(e) => setOtpAlphanumeric(e.currentTarget.checked)}
          />
          Alphanumeric OTP codes
        </label>
        <label>
          OTP expiration (seconds)
          <input
            inputMode="numeric"
            value={otpSeconds}
            onInput={(e) => setOtpSeconds(e.currentTarget.value)}
          />
        </label>
        <label>
          App name
          <input value={appName} onInput={(e) => setAppName(e.currentTarget.value)} />
        </label>
        <label>
          Email template
          <textarea rows={3} value={emailTemplate} onInput={(e) => setEmailTemplate(e.currentTarget.value)} />
        </label>
        <p aria-live="polite">Email preview: {preview(emailTemplate, appName, otpLength)}</p>
        <label>
          SMS template
          <textarea rows={2} value={smsTemplate} onInput={(e) => setSmsTemplate(e.currentTarget.value)} />
        </label>
        <p aria-live="polite">SMS preview: {preview(smsTemplate, appName, otpLength)}</p>
        <label>
          Enabled providers
          <textarea rows={2} value={providers} onInput={(e) => setProviders(e.currentTarget.value)} />
        </label>
        <label>
          OAuth client ids (provider=client id, one per line)
          <textarea rows={2} value={clientIds} onInput={(e) => setClientIds(e.currentTarget.value)} />
        </label>
        <div class="actions">
          <button type="submit" class="primary" disabled={busy || originErrors.length > 0}>
            Save
          </button>
          {config?.enabled === true && (
            <button type="button" disabled={busy} onClick={disable}>
              Disable auth proxy
            </button>
          )}
        </div>
        <Failure error={error} />
        {saved !== undefined && (
          <p role="status" class="ok">
            {saved}
          </p>
        )}
      </form>
    </div>
  );
}
