/** The auth proxy over a test's embedded service, as `serve` runs it: the vault from the data dir, forwarding through src/client. */
import pino, { type Logger } from 'pino';
import { inProcessTransport } from '../../src/client/in-process-transport.js';
import { startAuthProxy, type AuthProxyListener } from '../../src/proxy/proxy.js';
import type { EmbeddedService } from '../../src/service/embedded.js';
import type { EmbeddedHarness } from './embedded.js';
import { envelope, post } from './http.js';
import { KeyVault, loadOrCreateMasterKey } from '../../src/service/keys/index.js';

export async function startProxyOver(
  dataDir: string,
  service: EmbeddedService,
  opts: { now?: () => number; logger?: Logger } = {},
): Promise<AuthProxyListener> {
  const master = loadOrCreateMasterKey({ dataDir });
  const vault = new KeyVault(master);
  master.fill(0);
  return startAuthProxy({
    host: '127.0.0.1',
    port: 0,
    store: service.store,
    vault,
    transport: inProcessTransport(service.handler),
    logger: opts.logger ?? pino({ level: 'silent' }),
    ...(opts.now === undefined ? {} : { now: opts.now }),
  });
}

/** Enables the auth proxy for `organizationId` with these settings (as root); its config id. */
export async function enableAuthProxy(
  h: EmbeddedHarness,
  organizationId: string,
  settings: Record<string, unknown>,
): Promise<string> {
  const r = await post(
    h.baseUrl,
    h.service.credentials,
    '/public/v1/submit/enable_auth_proxy',
    envelope('ACTIVITY_TYPE_ENABLE_AUTH_PROXY', organizationId, settings),
  );
  if (r.status !== 200) throw new Error(`enable_auth_proxy answered ${r.status}: ${JSON.stringify(r.json)}`);
  return (r.json.activity as { result: { enableAuthProxyResult: { configId: string } } }).result
    .enableAuthProxyResult.configId;
}
