/**
 * `countersign proxy enable|show|set|disable` (issue 13): configures the organization's auth proxy
 * by submitting enable_auth_proxy / update_auth_proxy_config / disable_auth_proxy (and the query
 * get_auth_proxy_config) stamped with the data dir's root credentials, through src/client like any
 * other caller, so the policy engine and the activity log see each change. The activity checks
 * every value and names the parameter it refused; this file only turns flags into parameters.
 */
import { parseArgs } from 'node:util';
import { PublicApiClient, type Activity } from './client/client.js';
import { ApiKeyStamper } from './client/stamper.js';
import type { Transport } from './client/transport.js';
import { CountersignError, isCountersignError } from './shared/errors.js';
import type { Credentials } from './service/embedded.js';

export const PROXY_USAGE = `countersign proxy enable|show|set|disable [--data-dir DIR] [settings]
  enable    turn the auth proxy on (created on first use: its user, key and policy); prints the configuration
  show      print the configuration (never the proxy's key)
  set       change the settings given; the others keep their value
  disable   turn the proxy off (the configuration id and settings are kept)
Settings:
  --allowed-origin URL            an exact origin (https://app.example.com) or '*'; repeat for several
  --session-expiration-seconds N  session lifetime of OTP/OAuth logins (default 900)
  --otp-length N                  6 to 9
  --otp-alphanumeric true|false   Crockford base32 codes instead of digits
  --otp-expiration-seconds N      up to 600
  --app-name NAME                 shown in mails and texts
  --email-template TEXT           mail body; must contain {{.OtpCode}}
  --sms-template TEXT             text message; must contain {{.OtpCode}}
  --enabled-providers LIST        comma-separated: email, sms, google, apple, facebook, x, discord, passkey, wallet
  --oauth-client-id PROVIDER=ID   an OAuth client id (repeat; PROVIDER= removes one)
  --oauth-redirect-url URL        the OAuth redirect URL clients use
`;

const OPTIONS = {
  'allowed-origin': { type: 'string', multiple: true },
  'session-expiration-seconds': { type: 'string' },
  'otp-length': { type: 'string' },
  'otp-alphanumeric': { type: 'string' },
  'otp-expiration-seconds': { type: 'string' },
  'app-name': { type: 'string' },
  'email-template': { type: 'string' },
  'sms-template': { type: 'string' },
  'enabled-providers': { type: 'string' },
  'oauth-client-id': { type: 'string', multiple: true },
  'oauth-redirect-url': { type: 'string' },
} as const;

/** Splits argv into the proxy settings' flags and the rest (the server's flags, for loadConfig). */
export function splitProxyArgs(argv: readonly string[]): { proxy: string[]; rest: string[] } {
  const proxy: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    const name = a.startsWith('--') ? a.slice(2).split('=')[0] : undefined;
    if (name !== undefined && name in OPTIONS) {
      proxy.push(a);
      if (!a.includes('=') && i + 1 < argv.length) proxy.push(argv[++i] as string);
    } else rest.push(a);
  }
  return { proxy, rest };
}

function usage(message: string): CountersignError {
  return new CountersignError('CONFIG_INVALID', `${message}\n\n${PROXY_USAGE}`);
}

/** The activity parameters the flags set (only those given). */
export function proxyParameters(
  args: readonly string[],
  currentClientIds: Readonly<Record<string, string>> = {},
): Record<string, unknown> {
  let v;
  try {
    v = parseArgs({ args: [...args], options: OPTIONS, strict: true, allowPositionals: false }).values;
  } catch (e) {
    throw usage((e as Error).message);
  }
  const p: Record<string, unknown> = {};
  const int = (flag: string, s: string) => {
    if (!/^[0-9]{1,9}$/.test(s)) throw usage(`--${flag}: must be a whole number, got '${s}'`);
    return Number(s);
  };
  if (v['allowed-origin'] !== undefined) p.allowedOrigins = v['allowed-origin'];
  if (v['session-expiration-seconds'] !== undefined)
    p.sessionExpirationSeconds = String(int('session-expiration-seconds', v['session-expiration-seconds']));
  if (v['otp-length'] !== undefined) p.otpLength = int('otp-length', v['otp-length']);
  if (v['otp-alphanumeric'] !== undefined) {
    const b = v['otp-alphanumeric'];
    if (b !== 'true' && b !== 'false') throw usage(`--otp-alphanumeric: must be true or false, got '${b}'`);
    p.otpAlphanumeric = b === 'true';
  }
  if (v['otp-expiration-seconds'] !== undefined)
    p.otpExpirationSeconds = String(int('otp-expiration-seconds', v['otp-expiration-seconds']));
  if (v['app-name'] !== undefined) p.appName = v['app-name'];
  if (v['email-template'] !== undefined) p.emailTemplate = v['email-template'];
  if (v['sms-template'] !== undefined) p.smsTemplate = v['sms-template'];
  if (v['enabled-providers'] !== undefined)
    p.enabledProviders = v['enabled-providers']
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  if (v['oauth-client-id'] !== undefined) {
    const ids: Record<string, string> = { ...currentClientIds };
    for (const kv of v['oauth-client-id']) {
      const eq = kv.indexOf('=');
      if (eq < 1) throw usage(`--oauth-client-id: must be PROVIDER=ID, got '${kv}'`);
      const provider = kv.slice(0, eq);
      const id = kv.slice(eq + 1);
      if (id === '') delete ids[provider];
      else ids[provider] = id;
    }
    p.oauthClientIds = ids;
  }
  if (v['oauth-redirect-url'] !== undefined) p.oauthRedirectUrl = v['oauth-redirect-url'];
  return p;
}

function completed(a: Activity, type: string): Activity {
  if (a.status !== 'ACTIVITY_STATUS_COMPLETED')
    throw new CountersignError(
      'REQUEST_NOT_AUTHORIZED',
      `${type} did not complete (${a.status}${a.failure === undefined ? '' : `: ${a.failure.message}`}); it needs more approvals`,
    );
  return a;
}

/** Runs `proxy <sub>`; returns what to print (the configuration as get_auth_proxy_config shows it). */
export async function proxyCommand(input: {
  readonly sub: string | undefined;
  readonly flags: readonly string[];
  readonly credentials: Credentials;
  readonly transport: Transport;
}): Promise<Record<string, unknown>> {
  const c = input.credentials;
  const client = new PublicApiClient({
    transport: input.transport,
    stamper: new ApiKeyStamper(c),
    organizationId: c.organizationId,
  });
  const submit = async (path: string, type: string, parameters: Record<string, unknown>) =>
    completed(await client.submit(path, client.buildActivityBody({ type, parameters })), type);
  const show = async () =>
    (await client.query<{ authProxyConfig: Record<string, unknown> }>('get_auth_proxy_config', {}))
      .authProxyConfig;
  const current = async (): Promise<Record<string, unknown> | undefined> => {
    try {
      return await show();
    } catch (e) {
      if (isCountersignError(e) && e.code === 'RESOURCE_NOT_FOUND') return undefined;
      throw e;
    }
  };
  const clientIds = async () => ((await current())?.oauthClientIds ?? {}) as Readonly<Record<string, string>>;
  switch (input.sub) {
    case 'enable': {
      const ids = input.flags.some((f) => f.startsWith('--oauth-client-id')) ? await clientIds() : {};
      await submit('enable_auth_proxy', 'ACTIVITY_TYPE_ENABLE_AUTH_PROXY', proxyParameters(input.flags, ids));
      return await show();
    }
    case 'set': {
      const params = proxyParameters(input.flags, await clientIds());
      if (Object.keys(params).length === 0) throw usage('proxy set: give at least one setting');
      await submit('update_auth_proxy_config', 'ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG', params);
      return await show();
    }
    case 'show':
      if (input.flags.length > 0) throw usage('proxy show takes no settings');
      return await show();
    case 'disable':
      if (input.flags.length > 0) throw usage('proxy disable takes no settings');
      await submit('disable_auth_proxy', 'ACTIVITY_TYPE_DISABLE_AUTH_PROXY', {});
      return await show();
    default:
      throw usage(`proxy: unknown subcommand '${input.sub ?? ''}'`);
  }
}
