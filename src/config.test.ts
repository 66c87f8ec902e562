import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CountersignError } from './shared/errors.js';
import { loadConfig, parseListen } from './config.js';

const file = (content: unknown) => {
  const p = join(mkdtempSync(join(tmpdir(), 'countersign-config-')), 'config.json');
  writeFileSync(p, JSON.stringify(content));
  return p;
};

describe('loadConfig', () => {
  it('uses the defaults of DESIGN.md', () => {
    const { command, config } = loadConfig(['serve'], {});
    expect(command).toBe('serve');
    expect(config.dataDir).toBe('./data');
    expect(config.grpcListen).toEqual({ host: '127.0.0.1', port: 50051 });
    expect(config.apiListen).toEqual({ host: '127.0.0.1', port: 8080 });
    expect(config.proxyListen).toEqual({ host: '127.0.0.1', port: 8081 });
    expect(config.logLevel).toBe('info');
    expect(config.apiUrl).toBeUndefined();
  });

  it('reads --store from the flag or COUNTERSIGN_STORE, SQLite when absent, refusing what is not a postgres URL', () => {
    expect(loadConfig(['serve'], {}).config.store).toBeUndefined();
    const url = 'postgres://countersign@127.0.0.1:5432/countersign';
    expect(loadConfig(['serve', '--store', url], {}).config.store).toBe(url);
    expect(loadConfig(['init'], { COUNTERSIGN_STORE: url }).config.store).toBe(url);
    for (const bad of ['mysql://x@h/db', 'postgres://host-without-db', './data/countersign.db'])
      expect(() => loadConfig(['serve', '--store', bad], {})).toThrow(/--store: must be a postgres/);
  });

  it('reads --allow-private-network as a boolean flag, environment variable or file key (off by default)', () => {
    expect(loadConfig(['serve'], {}).config.allowPrivateNetwork).toBe(false);
    expect(loadConfig(['serve', '--allow-private-network'], {}).config.allowPrivateNetwork).toBe(true);
    // --- webhooks ---
    expect(loadConfig(['serve'], {}).config.webhookMaxAgeMs).toBe(24 * 60 * 60 * 1000);
    expect(loadConfig(['serve', '--webhook-max-age-seconds', '60'], {}).config.webhookMaxAgeMs).toBe(60_000);
    expect(() => loadConfig(['serve', '--webhook-max-age-seconds', '0'], {})).toThrow(
      /webhook-max-age-seconds/,
    );
    expect(
      loadConfig(['serve'], { COUNTERSIGN_ALLOW_PRIVATE_NETWORK: 'true' }).config.allowPrivateNetwork,
    ).toBe(true);
    const cfg = file({ allowPrivateNetwork: true });
    expect(loadConfig(['serve', '--config', cfg], {}).config.allowPrivateNetwork).toBe(true);
    expect(() => loadConfig(['serve'], { COUNTERSIGN_ALLOW_PRIVATE_NETWORK: 'yes' })).toThrow(
      /--allow-private-network: must be true or false/,
    );
  });

  it('reads --otlp-endpoint (flag, COUNTERSIGN_OTLP_ENDPOINT, file key otlpEndpoint) as the OTLP traces URL; off by default', () => {
    expect(loadConfig(['serve'], {}).config.otlpEndpoint).toBeUndefined();
    expect(loadConfig(['serve', '--otlp-endpoint', 'http://127.0.0.1:4318'], {}).config.otlpEndpoint).toBe(
      'http://127.0.0.1:4318/v1/traces',
    );
    expect(
      loadConfig(['serve'], { COUNTERSIGN_OTLP_ENDPOINT: 'https://collector.example/otlp/' }).config
        .otlpEndpoint,
    ).toBe('https://collector.example/otlp/v1/traces');
    expect(
      loadConfig(['serve', '--config', file({ otlpEndpoint: 'http://127.0.0.1:4318/v1/traces' })], {}).config
        .otlpEndpoint,
    ).toBe('http://127.0.0.1:4318/v1/traces');
    expect(() => loadConfig(['serve', '--otlp-endpoint', 'collector:4318'], {})).toThrow(
      /--otlp-endpoint: must be an http or https URL/,
    );
    expect(() => loadConfig(['serve', '--otlp-endpoint', 'not a url'], {})).toThrow(
      /--otlp-endpoint: .* is not a URL/,
    );
    expect(loadConfig(['serve'], {}).config.serviceName).toBe('countersign');
  });

  it('ranks flags over environment over config file over defaults', () => {
    const cfg = file({
      dataDir: '/from-file',
      grpcListen: '0.0.0.0:1',
      apiListen: '0.0.0.0:2',
      logLevel: 'warn',
    });
    const env = {
      COUNTERSIGN_GRPC_LISTEN: '0.0.0.0:10',
      COUNTERSIGN_API_LISTEN: '0.0.0.0:20',
      COUNTERSIGN_CONFIG: cfg,
    };
    const { config } = loadConfig(['serve', '--grpc-listen', '[::1]:100'], env);
    expect(config.grpcListen).toEqual({ host: '::1', port: 100 }); // flag
    expect(config.apiListen).toEqual({ host: '0.0.0.0', port: 20 }); // environment
    expect(config.dataDir).toBe('/from-file'); // file
    expect(config.logLevel).toBe('warn'); // file
    expect(config.proxyListen).toEqual({ host: '127.0.0.1', port: 8081 }); // default
  });

  it('collects repeatable --chain-rpc flags and the comma-separated variable', () => {
    const a = loadConfig(
      ['serve', '--chain-rpc', 'eip155:1=http://a', '--chain-rpc', 'eip155:31337=http://127.0.0.1:8545'],
      {},
    );
    expect([...a.config.chainRpc]).toEqual([
      ['eip155:1', 'http://a'],
      ['eip155:31337', 'http://127.0.0.1:8545'],
    ]);
    const b = loadConfig(['serve'], { COUNTERSIGN_CHAIN_RPC: 'eip155:1=http://a, solana:devnet=http://b' });
    expect(b.config.chainRpc.get('solana:devnet')).toBe('http://b');
  });

  it('takes the master key only from the environment', () => {
    expect(loadConfig(['serve'], { COUNTERSIGN_MASTER_KEY: 'ab'.repeat(32) }).config.masterKey).toBe(
      'ab'.repeat(32),
    );
    expect(() => loadConfig(['serve', '--master-key', 'x'], {})).toThrow(CountersignError);
  });

  it.each([
    [['serve', '--grpc-listen', 'nohost'], '--grpc-listen'],
    [['serve', '--api-listen', '1.2.3.4:70000'], '--api-listen'],
    [['serve', '--chain-rpc', 'eip155:1'], '--chain-rpc'],
    [['serve', '--chain-rpc', 'eip155:1=not a url'], '--chain-rpc'],
    [['serve', '--log-level', 'loud'], '--log-level'],
    [['serve', '--grpc-server', 'nghttp2'], '--grpc-server'],
    [['serve', '--max-request-age-ms', '-1'], '--max-request-age-ms'],
    [['serve', '--config', '/nonexistent/config.json'], '--config'],
  ])('refuses %j naming %s', (argv, name) => {
    let err: unknown;
    try {
      loadConfig(argv, {});
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CountersignError);
    expect((err as CountersignError).code).toBe('CONFIG_INVALID');
    expect((err as CountersignError).message).toContain(name);
  });
});

describe('parseListen', () => {
  it('reads IPv4, IPv6 and host names', () => {
    expect(parseListen('0.0.0.0:50051', 'x')).toEqual({ host: '0.0.0.0', port: 50051 });
    expect(parseListen('[::]:0', 'x')).toEqual({ host: '::', port: 0 });
    expect(parseListen('localhost:8080', 'x')).toEqual({ host: 'localhost', port: 8080 });
  });
});
