/** The auth proxy over a test's embedded service, as `serve` runs it: the vault from the data dir, forwarding through src/client. */
import pino, { type Logger } from 'pino';
import { inProcessTransport } from '../../src/client/in-process-transport.js';
import { startAuthProxy, type AuthProxyListener } from '../../src/proxy/proxy.js';
import type { EmbeddedService } from '../../src/service/embedded.js';
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
