/**
 * Configuration: flags beat environment, environment beats the config file, the file beats
 * defaults. Validated once here into precise types.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { CountersignError } from './shared/errors.js';

export interface ListenAddress {
  readonly host: string;
  readonly port: number;
  /** gRPC only: `unix:/path` listens on a Unix domain socket instead (host and port unused). */
  readonly unixPath?: string;
}

export interface Config {
  readonly dataDir: string;
  /** `--store`: the PostgreSQL URL, or undefined for SQLite in the data dir. */
  readonly store: string | undefined;
  readonly grpcListen: ListenAddress;
  readonly apiListen: ListenAddress;
  readonly proxyListen: ListenAddress;
  /** CAIP-2 id → JSON-RPC URL. */
  readonly chainRpc: ReadonlyMap<string, string>;
  readonly logLevel: string;
  /** Remote mode: the public API base URL the daemon talks to instead of the embedded service. */
  readonly apiUrl: string | undefined;
  readonly organizationId: string | undefined;
  readonly apiKeyFile: string | undefined;
  readonly maxRequestAgeMs: number;
  readonly maxClockSkewMs: number;
  /**
   * `--allow-private-network`: outbound calls (webhooks, OIDC, OAuth) may use http and reach
   * loopback and private addresses. For development only; logged at warn when on.
   */
  readonly allowPrivateNetwork: boolean;
  /** How long a webhook delivery is retried before it is marked failed (default 24 h). */
  readonly webhookMaxAgeMs: number;
  // --- auth proxy ---
  readonly smtpUrl: string | undefined;
  readonly smtpFrom: string | undefined;
  readonly smsUrl: string;
  readonly smsAccountSid: string | undefined;
  readonly smsAuthToken: string | undefined;
  readonly smsFrom: string | undefined;
  // --- end auth proxy ---
  /** gRPC TLS: server certificate and key files; with `grpcClientCa`, clients need a certificate (mTLS). */
  readonly grpcTlsCert: string | undefined;
  readonly grpcTlsKey: string | undefined;
  readonly grpcClientCa: string | undefined;
  /** Accept a non-loopback gRPC address without TLS. */
  readonly grpcInsecure: boolean;
  /** The callers file (`--grpc-clients`). */
  readonly grpcClients: string | undefined;
  readonly grpcMaxInFlight: number;
  readonly grpcMaxConnections: number;
  /** Seconds a gRPC connection may go without a call before it is closed (0: never). */
  readonly grpcIdleSeconds: number;
  /** The HTTP/2 server under gRPC: `lean` (countersign's own framing) or `grpc-js`. */
  readonly grpcServer: 'lean' | 'grpc-js';
  readonly grpcMaxWatchStreams: number;
  readonly grpcWatchMaxSeconds: number;
  readonly apiMaxInFlight: number;
  readonly apiMaxBodyBytes: number;
  /** Requests per second per API key on the public API; 0 = no limit. */
  readonly apiRateLimitPerKey: number;
  /** Only from the environment (never a flag: a flag shows in `ps`). */
  readonly masterKey: string | undefined;
  // --- console ---
  /** `--console-origin`: where the console is served (its host is the passkey relying-party id). */
  readonly consoleOrigin: string | undefined;
  /** `console invite`: the user to invite and whether a new one joins the root quorum. */
  readonly userName: string | undefined;
  readonly root: boolean;
  // --- end console ---
  // --- operability ---
  /** `--metrics-listen`: the Prometheus listener; undefined = off. */
  readonly metricsListen: ListenAddress | undefined;
  readonly serviceName: string;
  /** `--otlp-endpoint`: where spans go (the OTLP/HTTP traces URL); undefined = tracing off. */
  readonly otlpEndpoint: string | undefined;
  // --- end operability ---
}

/** One row per setting: flag, environment variable, config-file key, default, description. */
export const SETTINGS = [
  {
    flag: 'data-dir',
    env: 'COUNTERSIGN_DATA_DIR',
    key: 'dataDir',
    def: './data',
    help: 'data directory (SQLite store, master key, credentials.json)',
  },
  {
    flag: 'store',
    env: 'COUNTERSIGN_STORE',
    key: 'store',
    def: '',
    help: 'postgres://user@host:port/db for a store several replicas share; empty: SQLite in the data dir',
  },
  {
    flag: 'grpc-listen',
    env: 'COUNTERSIGN_GRPC_LISTEN',
    key: 'grpcListen',
    def: '127.0.0.1:50051',
    help: 'gRPC signer listener (host:port)',
  },
  {
    flag: 'api-listen',
    env: 'COUNTERSIGN_API_LISTEN',
    key: 'apiListen',
    def: '127.0.0.1:8080',
    help: 'public API HTTP listener (host:port)',
  },
  {
    flag: 'proxy-listen',
    env: 'COUNTERSIGN_PROXY_LISTEN',
    key: 'proxyListen',
    def: '127.0.0.1:8081',
    help: 'auth proxy HTTP listener (host:port)',
  },
  {
    flag: 'chain-rpc',
    env: 'COUNTERSIGN_CHAIN_RPC',
    key: 'chainRpc',
    def: '',
    help: 'CAIP2=URL JSON-RPC endpoint; repeatable (env: comma-separated)',
  },
  {
    flag: 'log-level',
    env: 'COUNTERSIGN_LOG_LEVEL',
    key: 'logLevel',
    def: 'info',
    help: 'trace, debug, info, warn, error, fatal',
  },
  {
    flag: 'api-url',
    env: 'COUNTERSIGN_API_URL',
    key: 'apiUrl',
    def: '',
    help: 'remote mode: base URL of a Turnkey-compatible public API',
  },
  {
    flag: 'organization-id',
    env: 'COUNTERSIGN_ORGANIZATION_ID',
    key: 'organizationId',
    def: '',
    help: 'remote mode: default organization id',
  },
  {
    flag: 'api-key-file',
    env: 'COUNTERSIGN_API_KEY_FILE',
    key: 'apiKeyFile',
    def: '',
    help: 'remote mode: JSON file with apiPublicKey and apiPrivateKey',
  },
  {
    flag: 'max-request-age-ms',
    env: 'COUNTERSIGN_MAX_REQUEST_AGE_MS',
    key: 'maxRequestAgeMs',
    def: '3600000',
    help: 'oldest timestampMs the public API accepts, in ms',
  },
  {
    flag: 'max-clock-skew-ms',
    env: 'COUNTERSIGN_MAX_CLOCK_SKEW_MS',
    key: 'maxClockSkewMs',
    def: '300000',
    help: 'how far in the future timestampMs may be, in ms',
  },
  {
    flag: 'grpc-tls-cert',
    env: 'COUNTERSIGN_GRPC_TLS_CERT',
    key: 'grpcTlsCert',
    def: '',
    help: 'gRPC TLS: PEM certificate (chain) file; reloaded on SIGHUP or change',
  },
  {
    flag: 'grpc-tls-key',
    env: 'COUNTERSIGN_GRPC_TLS_KEY',
    key: 'grpcTlsKey',
    def: '',
    help: 'gRPC TLS: PEM private key file',
  },
  {
    flag: 'grpc-client-ca',
    env: 'COUNTERSIGN_GRPC_CLIENT_CA',
    key: 'grpcClientCa',
    def: '',
    help: 'gRPC mTLS: PEM CA file; clients must present a certificate it signed',
  },
  {
    flag: 'grpc-insecure',
    env: 'COUNTERSIGN_GRPC_INSECURE',
    key: 'grpcInsecure',
    def: 'false',
    help: 'allow a non-loopback --grpc-listen without TLS (logged at warn)',
    boolean: true,
  },
  {
    flag: 'grpc-clients',
    env: 'COUNTERSIGN_GRPC_CLIENTS',
    key: 'grpcClients',
    def: '',
    help: 'JSON file of known gRPC callers (certificate subject or token hash) and what each may do',
  },
  {
    flag: 'grpc-max-in-flight',
    env: 'COUNTERSIGN_GRPC_MAX_IN_FLIGHT',
    key: 'grpcMaxInFlight',
    def: '256',
    help: 'gRPC calls handled at once; beyond it RESOURCE_EXHAUSTED',
  },
  {
    flag: 'grpc-max-connections',
    env: 'COUNTERSIGN_GRPC_MAX_CONNECTIONS',
    key: 'grpcMaxConnections',
    def: '1024',
    help: 'gRPC connections open at once; one more is sent GOAWAY and closed',
  },
  {
    flag: 'grpc-idle-seconds',
    env: 'COUNTERSIGN_GRPC_IDLE_SECONDS',
    key: 'grpcIdleSeconds',
    def: '300',
    help: 'a gRPC connection with no call for this long is sent GOAWAY and closed (0: never)',
  },
  {
    flag: 'grpc-server',
    env: 'COUNTERSIGN_GRPC_SERVER',
    key: 'grpcServer',
    def: 'lean',
    help: "the HTTP/2 server under gRPC: lean (countersign's own framing) or grpc-js (node:http2)",
  },
  {
    flag: 'grpc-max-watch-streams',
    env: 'COUNTERSIGN_GRPC_MAX_WATCH_STREAMS',
    key: 'grpcMaxWatchStreams',
    def: '32',
    help: 'open Watch* streams per caller; one more is RESOURCE_EXHAUSTED',
  },
  {
    flag: 'grpc-watch-max-seconds',
    env: 'COUNTERSIGN_GRPC_WATCH_MAX_SECONDS',
    key: 'grpcWatchMaxSeconds',
    def: '3600',
    help: 'longest a Watch* stream stays open; then DEADLINE_EXCEEDED',
  },
  {
    flag: 'api-max-in-flight',
    env: 'COUNTERSIGN_API_MAX_IN_FLIGHT',
    key: 'apiMaxInFlight',
    def: '256',
    help: 'public API requests handled at once; beyond it 503 with Retry-After',
  },
  {
    flag: 'api-max-body-bytes',
    env: 'COUNTERSIGN_API_MAX_BODY_BYTES',
    key: 'apiMaxBodyBytes',
    def: '4194304',
    help: 'largest stamped public API request body; larger is 413',
  },
  {
    flag: 'api-rate-limit-per-key',
    env: 'COUNTERSIGN_API_RATE_LIMIT_PER_KEY',
    key: 'apiRateLimitPerKey',
    def: '0',
    help: 'public API requests per second per API key (burst: twice that); 0 = no limit',
  },
  {
    flag: 'allow-private-network',
    env: 'COUNTERSIGN_ALLOW_PRIVATE_NETWORK',
    key: 'allowPrivateNetwork',
    def: 'false',
    help: 'development only: outbound calls may use http and reach loopback and private addresses',
    boolean: true,
  },
  {
    flag: 'webhook-max-age-seconds',
    env: 'COUNTERSIGN_WEBHOOK_MAX_AGE_SECONDS',
    key: 'webhookMaxAgeSeconds',
    def: '86400',
    help: 'how long a webhook delivery is retried before it is marked failed, in seconds',
  },
  // --- console ---
  {
    flag: 'console-origin',
    env: 'COUNTERSIGN_CONSOLE_ORIGIN',
    key: 'consoleOrigin',
    def: '',
    help: 'origin the web console is served at (https://host[:port]; its host is the passkey rpId); default: http://localhost:<api port>',
  },
  {
    flag: 'user-name',
    env: 'COUNTERSIGN_USER_NAME',
    key: 'userName',
    def: '',
    help: 'console invite: the user to invite (created when missing)',
  },
  {
    flag: 'root',
    env: 'COUNTERSIGN_ROOT',
    key: 'root',
    def: 'false',
    help: 'console invite: a user created by the invite joins the root quorum',
    boolean: true,
  },
  // --- end console ---
  // --- operability ---
  {
    flag: 'metrics-listen',
    env: 'COUNTERSIGN_METRICS_LISTEN',
    key: 'metricsListen',
    def: '',
    help: 'Prometheus /metrics listener (host:port, e.g. 127.0.0.1:9464); off when empty',
  },
  {
    flag: 'service-name',
    env: 'COUNTERSIGN_SERVICE_NAME',
    key: 'serviceName',
    def: 'countersign',
    help: 'the service name on metrics (label `service`) and on spans',
  },
  {
    flag: 'otlp-endpoint',
    env: 'COUNTERSIGN_OTLP_ENDPOINT',
    key: 'otlpEndpoint',
    def: '',
    help: 'OpenTelemetry traces: OTLP/HTTP collector base URL (e.g. http://127.0.0.1:4318; /v1/traces is added); off when empty',
  },
  // --- end operability ---
  // --- auth proxy --- delivery of OTP codes (issue 13)
  {
    flag: 'smtp-url',
    env: 'COUNTERSIGN_SMTP_URL',
    key: 'smtpUrl',
    def: '',
    help: 'SMTP server for email OTPs: smtps://user:pass@host:465 or smtp://… (STARTTLS when offered)',
  },
  { flag: 'smtp-from', env: 'COUNTERSIGN_SMTP_FROM', key: 'smtpFrom', def: '', help: 'sender of OTP mails' },
  {
    flag: 'sms-url',
    env: 'COUNTERSIGN_SMS_URL',
    key: 'smsUrl',
    def: 'https://api.twilio.com',
    help: "base URL of the SMS provider's Twilio-compatible Messages API",
  },
  {
    flag: 'sms-account-sid',
    env: 'COUNTERSIGN_SMS_ACCOUNT_SID',
    key: 'smsAccountSid',
    def: '',
    help: 'SMS account SID',
  },
  {
    flag: 'sms-auth-token',
    env: 'COUNTERSIGN_SMS_AUTH_TOKEN',
    key: 'smsAuthToken',
    def: '',
    help: 'SMS auth token',
  },
  {
    flag: 'sms-from',
    env: 'COUNTERSIGN_SMS_FROM',
    key: 'smsFrom',
    def: '',
    help: 'sender number of OTP texts (E.164)',
  },
  // --- end auth proxy ---
] as const;

type SettingKey = (typeof SETTINGS)[number]['key'];

function storeUrl(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^postgres(ql)?:\/\/[^/]+\/[^/?]+/.test(value))
    throw new CountersignError(
      'CONFIG_INVALID',
      '--store: must be a postgres://user@host:port/database URL (empty for SQLite in the data dir)',
      { field: 'store' },
    );
  return value;
}

export function parseListen(value: string, field: string): ListenAddress {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):([0-9]{1,5})$/.exec(value);
  const port = m === null ? NaN : Number(m[2]);
  if (m === null || port > 65535)
    throw new CountersignError('CONFIG_INVALID', `${field}: '${value}' is not host:port`, { field });
  return { host: (m[1] as string).replace(/^\[|\]$/g, ''), port };
}

function unixListen(value: string, field: string): ListenAddress {
  const path = value.slice('unix:'.length);
  if (!path.startsWith('/'))
    throw new CountersignError('CONFIG_INVALID', `${field}: '${value}' must be unix:/absolute/path`, {
      field,
    });
  return { host: '', port: 0, unixPath: path };
}

function parseChainRpc(entries: readonly string[], field: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of entries) {
    const i = e.indexOf('=');
    const caip2 = e.slice(0, i);
    const url = e.slice(i + 1);
    if (i <= 0 || !/^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/.test(caip2))
      throw new CountersignError(
        'CONFIG_INVALID',
        `${field}: '${e}' must be CAIP2=URL, e.g. eip155:31337=http://127.0.0.1:8545`,
        { field },
      );
    try {
      new URL(url);
    } catch {
      throw new CountersignError('CONFIG_INVALID', `${field}: '${url}' is not a URL`, { field });
    }
    out.set(caip2, url);
  }
  return out;
}

// --- operability ---
function serviceName(value: string): string {
  if (!/^[A-Za-z][A-Za-z0-9_.-]{0,62}$/.test(value))
    throw new CountersignError(
      'CONFIG_INVALID',
      '--service-name: 1 to 63 letters, digits, dot, dash or underscore, starting with a letter',
      { field: 'service-name' },
    );
  return value;
}

/** The OTLP/HTTP traces URL: the collector's base URL with `/v1/traces`, unless it names that path. */
function otlpEndpoint(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CountersignError('CONFIG_INVALID', `--otlp-endpoint: '${value}' is not a URL`, {
      field: 'otlp-endpoint',
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CountersignError('CONFIG_INVALID', '--otlp-endpoint: must be an http or https URL', {
      field: 'otlp-endpoint',
    });
  if (url.pathname.endsWith('/v1/traces')) return url.href;
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/traces`;
  return url.href;
}
// --- end operability ---

function grpcServerSetting(value: string): 'lean' | 'grpc-js' {
  if (value === 'lean' || value === 'grpc-js') return value;
  throw new CountersignError(
    'CONFIG_INVALID',
    `--grpc-server: ${JSON.stringify(value)} is not lean or grpc-js`,
    {
      field: 'grpc-server',
    },
  );
}

function booleanSetting(value: string, field: string): boolean {
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0' || value === '') return false;
  throw new CountersignError('CONFIG_INVALID', `${field}: must be true or false`, { field });
}

function atLeastOne(value: string, field: string): number {
  const n = positiveInt(value, field);
  if (n < 1) throw new CountersignError('CONFIG_INVALID', `${field}: must be at least 1`, { field });
  return n;
}

function positiveInt(value: string, field: string): number {
  if (!/^[0-9]{1,12}$/.test(value))
    throw new CountersignError('CONFIG_INVALID', `${field}: must be a non-negative integer`, { field });
  return Number(value);
}

// --- console ---
/** `--console-origin`: an origin (scheme, host, optional port; no path), normalized. */
function consoleOrigin(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CountersignError(
      'CONFIG_INVALID',
      '--console-origin: must be an origin such as https://console.example.com',
      { field: 'console-origin' },
    );
  }
  if (
    (url.protocol !== 'https:' && url.protocol !== 'http:') ||
    url.pathname !== '/' ||
    url.search !== '' ||
    url.hash !== ''
  )
    throw new CountersignError(
      'CONFIG_INVALID',
      '--console-origin: must be http(s)://host[:port] without a path',
      { field: 'console-origin' },
    );
  if (/^[0-9.]+$/.test(url.hostname) || url.hostname.startsWith('['))
    throw new CountersignError(
      'CONFIG_INVALID',
      '--console-origin: WebAuthn refuses IP addresses as relying-party ids; use a host name',
      { field: 'console-origin' },
    );
  return url.origin;
}
// --- end console ---

export interface ParsedCommandLine {
  readonly command: string | undefined;
  readonly help: boolean;
  readonly config: Config;
  /** Positionals after the command (`console invite`). */
  readonly args: readonly string[]; // --- console ---
}

/** Parses argv (without node and script) and the environment into a command and its config. */
export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv): ParsedCommandLine {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }> = {
    config: { type: 'string' },
    help: { type: 'boolean' },
  };
  for (const s of SETTINGS)
    options[s.flag] =
      s.flag === 'chain-rpc'
        ? { type: 'string', multiple: true }
        : 'boolean' in s
          ? { type: 'boolean' }
          : { type: 'string' };
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (cause) {
    throw new CountersignError('CONFIG_INVALID', (cause as Error).message, { cause });
  }
  const flags = parsed.values as Record<string, string | string[] | boolean | undefined>;
  const configPath = (flags.config as string | undefined) ?? env.COUNTERSIGN_CONFIG;
  let file: Record<string, unknown> = {};
  if (configPath !== undefined) {
    try {
      file = JSON.parse(readFileSync(configPath, 'utf8')) as Record<string, unknown>;
    } catch (cause) {
      throw new CountersignError('CONFIG_INVALID', `--config: ${configPath} is unreadable or not JSON`, {
        cause,
        field: 'config',
      });
    }
  }
  const raw = {} as Record<SettingKey, string | string[]>;
  for (const s of SETTINGS) {
    const fromFlag = flags[s.flag];
    const fromEnv = env[s.env];
    const fromFile = file[s.key];
    if (s.key === 'chainRpc') {
      raw.chainRpc = Array.isArray(fromFlag)
        ? (fromFlag as string[])
        : fromEnv !== undefined && fromEnv !== ''
          ? fromEnv.split(',').map((x) => x.trim())
          : fromFile !== undefined && typeof fromFile === 'object' && fromFile !== null
            ? Object.entries(fromFile as Record<string, string>).map(([k, v]) => `${k}=${v}`)
            : [];
      continue;
    }
    raw[s.key] =
      (typeof fromFlag === 'boolean' ? String(fromFlag) : (fromFlag as string | undefined)) ??
      fromEnv ??
      (fromFile === undefined ? undefined : String(fromFile)) ??
      s.def;
  }
  const str = (k: SettingKey) => raw[k] as string;
  const opt = (k: SettingKey) => (str(k) === '' ? undefined : str(k));
  const config: Config = {
    dataDir: str('dataDir'),
    store: storeUrl(opt('store')),
    grpcListen: str('grpcListen').startsWith('unix:')
      ? unixListen(str('grpcListen'), '--grpc-listen')
      : parseListen(str('grpcListen'), '--grpc-listen'),
    apiListen: parseListen(str('apiListen'), '--api-listen'),
    proxyListen: parseListen(str('proxyListen'), '--proxy-listen'),
    chainRpc: parseChainRpc(raw.chainRpc as string[], '--chain-rpc'),
    logLevel: str('logLevel'),
    apiUrl: opt('apiUrl'),
    organizationId: opt('organizationId'),
    apiKeyFile: opt('apiKeyFile'),
    maxRequestAgeMs: positiveInt(str('maxRequestAgeMs'), '--max-request-age-ms'),
    maxClockSkewMs: positiveInt(str('maxClockSkewMs'), '--max-clock-skew-ms'),
    allowPrivateNetwork: booleanSetting(str('allowPrivateNetwork'), '--allow-private-network'),
    webhookMaxAgeMs: atLeastOne(str('webhookMaxAgeSeconds'), '--webhook-max-age-seconds') * 1000,
    // --- auth proxy ---
    smtpUrl: opt('smtpUrl'),
    smtpFrom: opt('smtpFrom'),
    smsUrl: str('smsUrl'),
    smsAccountSid: opt('smsAccountSid'),
    smsAuthToken: opt('smsAuthToken'),
    smsFrom: opt('smsFrom'),
    // --- end auth proxy ---
    grpcTlsCert: opt('grpcTlsCert'),
    grpcTlsKey: opt('grpcTlsKey'),
    grpcClientCa: opt('grpcClientCa'),
    grpcInsecure: booleanSetting(str('grpcInsecure'), '--grpc-insecure'),
    grpcClients: opt('grpcClients'),
    grpcMaxInFlight: atLeastOne(str('grpcMaxInFlight'), '--grpc-max-in-flight'),
    grpcMaxConnections: atLeastOne(str('grpcMaxConnections'), '--grpc-max-connections'),
    grpcIdleSeconds: positiveInt(str('grpcIdleSeconds'), '--grpc-idle-seconds'),
    grpcServer: grpcServerSetting(str('grpcServer')),
    grpcMaxWatchStreams: atLeastOne(str('grpcMaxWatchStreams'), '--grpc-max-watch-streams'),
    grpcWatchMaxSeconds: atLeastOne(str('grpcWatchMaxSeconds'), '--grpc-watch-max-seconds'),
    apiMaxInFlight: atLeastOne(str('apiMaxInFlight'), '--api-max-in-flight'),
    apiMaxBodyBytes: atLeastOne(str('apiMaxBodyBytes'), '--api-max-body-bytes'),
    apiRateLimitPerKey: positiveInt(str('apiRateLimitPerKey'), '--api-rate-limit-per-key'),
    masterKey: env.COUNTERSIGN_MASTER_KEY === '' ? undefined : env.COUNTERSIGN_MASTER_KEY,
    // --- console ---
    consoleOrigin: consoleOrigin(opt('consoleOrigin')),
    userName: opt('userName'),
    root: booleanSetting(str('root'), '--root'),
    // --- end console ---
    // --- operability ---
    metricsListen:
      opt('metricsListen') === undefined ? undefined : parseListen(str('metricsListen'), '--metrics-listen'),
    serviceName: serviceName(str('serviceName')),
    otlpEndpoint: otlpEndpoint(opt('otlpEndpoint')),
    // --- end operability ---
  };
  if ((config.grpcTlsCert === undefined) !== (config.grpcTlsKey === undefined))
    throw new CountersignError('CONFIG_INVALID', '--grpc-tls-cert and --grpc-tls-key go together', {
      field: 'grpc-tls-cert',
    });
  if (config.grpcClientCa !== undefined && config.grpcTlsCert === undefined)
    throw new CountersignError(
      'CONFIG_INVALID',
      '--grpc-client-ca needs --grpc-tls-cert and --grpc-tls-key',
      {
        field: 'grpc-client-ca',
      },
    );
  if (!['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'].includes(config.logLevel))
    throw new CountersignError('CONFIG_INVALID', `--log-level: '${config.logLevel}' is not a pino level`, {
      field: 'log-level',
    });
  return {
    command: parsed.positionals[0],
    help: flags.help === true,
    config,
    args: parsed.positionals.slice(1), // --- console ---
  };
}
