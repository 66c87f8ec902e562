/**
 * `countersign proxy enable|show|set|disable` (issue 13) run as operators run it (the bin, a fresh
 * data dir): each submits its activity with the root credentials and prints the configuration;
 * `set` keeps what it is not given and merges OAuth client ids; bad values are refused naming the
 * flag or the parameter; the proxy's key never appears in the output; the activities are recorded.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEmbeddedService } from '../src/service/embedded.js';
import pino from 'pino';

const run = promisify(execFile);
const BIN = fileURLToPath(new URL('../bin/countersign.js', import.meta.url));
let dataDir: string;

const cli = async (...args: string[]) => {
  const { stdout } = await run(process.execPath, [
    BIN,
    ...args,
    '--data-dir',
    dataDir,
    '--log-level',
    'silent',
  ]);
  return JSON.parse(stdout.trim()) as Record<string, unknown>;
};
const cliFails = async (...args: string[]) => {
  try {
    await run(process.execPath, [BIN, ...args, '--data-dir', dataDir, '--log-level', 'silent']);
  } catch (e) {
    const err = e as { code: number; stderr: string };
    return { code: err.code, stderr: err.stderr };
  }
  throw new Error('expected the command to fail');
};

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'countersign-proxy-cli-'));
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

// Each run starts the bin through tsx: seconds apiece on a loaded machine.
describe('countersign proxy', { timeout: 240_000 }, () => {
  it('show before enable says it is not enabled; enable creates it with the settings given', async () => {
    const before = await cliFails('proxy', 'show');
    expect(before.code).toBe(1);
    expect(before.stderr).toMatch(/never been enabled/);
    const shown = await cli(
      'proxy',
      'enable',
      '--allowed-origin',
      'https://app.example.com',
      '--allowed-origin=https://admin.example.com',
      '--otp-length',
      '8',
      '--app-name',
      'Demo',
      '--enabled-providers',
      'email,google',
      '--oauth-client-id',
      'google=client-123.apps.example',
    );
    expect(shown).toMatchObject({
      enabled: true,
      allowedOrigins: ['https://app.example.com', 'https://admin.example.com'],
      otpLength: 8,
      appName: 'Demo',
      enabledProviders: ['email', 'google'],
      oauthClientIds: { google: 'client-123.apps.example' },
      sessionExpirationSeconds: '900',
    });
    expect(shown.configId).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.stringify(shown)).not.toMatch(/sealed|apiPrivateKey/i);
  });

  it('set changes only what it is given, merges OAuth client ids, and show prints the result', async () => {
    const set = await cli(
      'proxy',
      'set',
      '--session-expiration-seconds',
      '1800',
      '--otp-alphanumeric',
      'true',
      '--otp-expiration-seconds',
      '120',
      '--email-template',
      'Your {{.AppName}} code: {{.OtpCode}}',
      '--oauth-client-id',
      'apple=com.example.app',
      '--oauth-redirect-url',
      'https://app.example.com/oauth',
    );
    expect(set).toMatchObject({
      sessionExpirationSeconds: '1800',
      otpAlphanumeric: true,
      otpExpirationSeconds: '120',
      emailTemplate: 'Your {{.AppName}} code: {{.OtpCode}}',
      oauthClientIds: { google: 'client-123.apps.example', apple: 'com.example.app' },
      oauthRedirectUrl: 'https://app.example.com/oauth',
      otpLength: 8,
      appName: 'Demo',
    });
    const removed = await cli('proxy', 'set', '--oauth-client-id', 'google=');
    expect(removed.oauthClientIds).toEqual({ apple: 'com.example.app' });
    expect(await cli('proxy', 'show')).toEqual(removed);
  });

  it('refuses bad values naming the flag or the parameter, and changes nothing', async () => {
    const wildcard = await cliFails('proxy', 'set', '--allowed-origin', 'https://*.example.com');
    expect(wildcard.stderr).toMatch(/parameters\.allowedOrigins\.0.*partial wildcards/);
    const length = await cliFails('proxy', 'set', '--otp-length', '12');
    expect(length.stderr).toMatch(/parameters\.otpLength/);
    const nan = await cliFails('proxy', 'set', '--otp-length', 'six');
    expect(nan.stderr).toMatch(/--otp-length: must be a whole number/);
    const nothing = await cliFails('proxy', 'set');
    expect(nothing.stderr).toMatch(/give at least one setting/);
    const elsewhere = await cliFails('init', '--otp-length', '6');
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toMatch(/--otp-length: is a setting of 'countersign proxy' only/);
    expect((await cli('proxy', 'show')).otpLength).toBe(8);
  });

  it('disable turns it off and keeps the configuration id; every change is a recorded activity', async () => {
    const { configId } = await cli('proxy', 'show');
    const off = await cli('proxy', 'disable');
    expect(off).toMatchObject({ enabled: false, configId });
    const on = await cli('proxy', 'enable');
    expect(on).toMatchObject({ enabled: true, configId, appName: 'Demo' });
    const service = await openEmbeddedService({ dataDir, logger: pino({ level: 'silent' }) });
    try {
      const org = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8'))
        .organizationId as string;
      const activities = await service.store.listActivities(org, { limit: 100 });
      const types = activities.map((a) => a.type);
      expect(types.filter((t) => t === 'ACTIVITY_TYPE_ENABLE_AUTH_PROXY')).toHaveLength(2);
      expect(types.filter((t) => t === 'ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG')).toHaveLength(2);
      expect(types).toContain('ACTIVITY_TYPE_DISABLE_AUTH_PROXY');
    } finally {
      await service.close();
    }
  });
});
