/**
 * The console's AUTH section against issue 13's auth proxy: sign in with a passkey, enable the proxy
 * with two allowed origins through the form, and the proxy then accepts one of them and refuses a
 * third. The activities (enable_auth_proxy, update_auth_proxy_config, get_auth_proxy_config) and the
 * proxy listener come with issue 13.
 */
import { TurnkeyClient } from '@turnkey/http';
import { ApiKeyStamper as TurnkeyApiKeyStamper } from '@turnkey/api-key-stamper';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthProxyListener } from '../src/proxy/proxy.js';
import { startProxyOver } from './helpers/proxy.js';
import { startConsoleHarness, type ConsoleHarness } from './helpers/console-browser.js';

const ALLOWED = ['https://app.example.com', 'https://admin.example.com'];
const THIRD = 'https://evil.example.net';

let h: ConsoleHarness | undefined;

let proxy: AuthProxyListener | undefined;

/** The auth proxy listener in front of the harness's service, as `serve` runs it. */
async function proxyBaseUrl(harness: ConsoleHarness): Promise<string> {
  proxy = await startProxyOver(harness.dataDir, harness.service);
  return `http://${proxy.address}`;
}

describe('console AUTH section with the auth proxy', () => {
  beforeAll(async () => {
    h = await startConsoleHarness();
  });
  afterAll(async () => {
    await proxy?.close();
    await h?.close();
  });

  it('enables the proxy with two origins; the proxy accepts one and refuses a third', async () => {
    if (h === undefined) throw new Error('chromium is not installed');
    const link = await h.invite('auth-admin');
    const { page } = h;
    await page.goto(link);
    await page.getByRole('button', { name: /passkey/i }).click();
    await page.getByRole('heading', { name: 'Activities', level: 1 }).waitFor();
    // The invited user is not root: a policy lets it manage the auth proxy.
    const org = h.service.credentials.organizationId;
    const root = new TurnkeyClient(
      { baseUrl: `http://${h.http.address}` },
      new TurnkeyApiKeyStamper(h.service.credentials),
    );
    const admin = (await h.service.store.listUsers(org)).find((u) => u.name === 'auth-admin')?.id as string;
    const policy = await root.createPolicy({
      type: 'ACTIVITY_TYPE_CREATE_POLICY_V3',
      timestampMs: String(Date.now()),
      organizationId: org,
      parameters: {
        policyName: 'auth-admin runs the auth proxy',
        effect: 'EFFECT_ALLOW',
        consensus: `approvers.any(u, u.id == '${admin}')`,
        condition: "activity.type.contains('AUTH_PROXY')",
        notes: '',
      },
    });
    expect(policy.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');

    await page.getByRole('navigation').getByRole('button', { name: 'Auth proxy' }).click();
    await page.getByRole('heading', { name: 'Auth proxy', level: 1 }).waitFor();
    await page.getByRole('textbox', { name: 'Allowed origins' }).fill(ALLOWED.join('\n'));
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByRole('status').last().textContent()).toBe('Saved');
    await h.screenshot('auth-proxy-saved');

    const { authProxyConfig } = (await root.request('/public/v1/query/get_auth_proxy_config', {
      organizationId: org,
    })) as { authProxyConfig: { configId: string; enabled: boolean; allowedOrigins: string[] } };
    expect(authProxyConfig.enabled).toBe(true);
    expect(authProxyConfig.allowedOrigins).toEqual(ALLOWED);

    const proxy = await proxyBaseUrl(h);
    const call = (origin: string) =>
      fetch(`${proxy}/v1/wallet_kit_config`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          origin,
          'x-auth-proxy-config-id': authProxyConfig.configId,
        },
      });
    const ok = await call(ALLOWED[0] as string);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(ALLOWED[0]);
    const refused = await call(THIRD);
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.headers.get('access-control-allow-origin')).not.toBe(THIRD);
  });
});
