/**
 * The web console in headless Chromium (issue 17): an invite link registers a passkey and signs in;
 * a 2-of-2 policy holds a sign_transaction, the console approves it with the passkey and the
 * activity completes with a signature viem verifies; a tampered stamp is refused and the page says
 * so; screenshots of each page; no serious axe-core violations.
 */
import { TurnkeyClient } from '@turnkey/http';
import { ApiKeyStamper as TurnkeyApiKeyStamper } from '@turnkey/api-key-stamper';
import { recoverTransactionAddress, serializeTransaction, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleHarness, type ConsoleHarness } from './helpers/console-browser.js';
import { insertUserWithApiKey } from './helpers/users.js';

const TO = '0x15d34aaf54267db7d7c367839aaf71a00a2c6a65';

let h: ConsoleHarness;

beforeAll(async () => {
  h = await startConsoleHarness();
});

afterAll(async () => {
  await h?.close();
});

describe('web console in Chromium', () => {
  it('signs in with a passkey through an invite link, once', async () => {
    const link = await h.invite('alice');
    expect(link).toMatch(
      new RegExp(`^http://localhost:${h.port}/console/invite#[0-9a-f-]{36}\\.[0-9a-f]{64}$`),
    );
    const { page } = h;
    await page.goto(link);
    await h.screenshot('invite');
    await page.getByRole('button', { name: /passkey/i }).click();
    await page.getByRole('heading', { name: 'Activities', level: 1 }).waitFor();
    expect(page.url()).toBe(`http://localhost:${h.port}/console/`);
    // The passkey is alice's authenticator now; the invite key is gone.
    const users = await h.service.store.listUsers(h.service.credentials.organizationId);
    const alice = users.find((u) => u.name === 'alice');
    expect(alice?.isRoot).toBe(false);
    expect(await h.service.store.listAuthenticators(alice?.id as string)).toHaveLength(1);
    expect(await h.service.store.listApiKeys(alice?.id as string)).toHaveLength(0);
    // The same link a second time is refused, in words.
    const again = await h.context.newPage();
    const cdp = await h.context.newCDPSession(again);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    await again.goto(link);
    await again.getByRole('button', { name: /passkey/i }).click();
    await expect.poll(() => again.getByRole('alert').textContent()).toMatch(/already used or has expired/);
    await again.close();
  });

  it('approves a pending 2-of-2 sign_transaction with the passkey; the signature verifies', async () => {
    const org = h.service.credentials.organizationId;
    const creds = h.service.credentials;
    const root = new TurnkeyClient({ baseUrl: `http://${h.http.address}` }, new TurnkeyApiKeyStamper(creds));
    const users = await h.service.store.listUsers(org);
    const alice = users.find((u) => u.name === 'alice')?.id as string;
    const bob = await insertUserWithApiKey(h.service.store, { organizationId: org, name: 'bob' });
    const policy = await root.createPolicy({
      type: 'ACTIVITY_TYPE_CREATE_POLICY_V3',
      timestampMs: String(Date.now()),
      organizationId: org,
      parameters: {
        policyName: 'alice and bob sign together',
        effect: 'EFFECT_ALLOW',
        condition: "activity.type == 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2'",
        consensus: `approvers.filter(u, u.id in ['${alice}', '${bob.userId}']).count() >= 2`,
        notes: '',
      },
    });
    expect(policy.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const account = creds.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')?.address as Hex;
    const bobApi = new TurnkeyClient(
      { baseUrl: `http://${h.http.address}` },
      new TurnkeyApiKeyStamper(bob.key),
    );
    const unsignedTransaction = serializeTransaction({
      chainId: 11155111,
      type: 'eip1559',
      nonce: 7,
      to: TO,
      value: 10n ** 15n,
      gas: 21000n,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    }).slice(2);
    const pending = await bobApi.signTransaction({
      type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
      timestampMs: String(Date.now()),
      organizationId: org,
      parameters: { signWith: account, unsignedTransaction, type: 'TRANSACTION_TYPE_ETHEREUM' },
    });
    expect(pending.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');

    const { page } = h;
    await page.getByRole('button', { name: 'Refresh' }).click();
    const card = page.getByRole('article');
    await card.getByRole('button', { name: 'Approve' }).waitFor();
    // Described in words: chain, recipient, value, the policy that asked, the votes so far.
    const text = (await card.textContent()) ?? '';
    expect(text).toContain('EVM chain 11155111');
    expect(text.toLowerCase()).toContain(TO);
    expect(text).toContain('0.001 ETH');
    await expect.poll(async () => (await card.textContent()) ?? '').toContain('alice and bob sign together');
    expect(text).toContain('bob: approved');
    await h.screenshot('activities-pending');
    expect(await h.seriousViolations()).toEqual([]);

    await card.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => page.getByRole('article').count()).toBe(0);
    const done = await root.getActivity({ organizationId: org, activityId: pending.activity.id });
    expect(done.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const signed = (done.activity.result as { signTransactionResult?: { signedTransaction: string } })
      .signTransactionResult?.signedTransaction as string;
    expect(await recoverTransactionAddress({ serializedTransaction: `0x${signed}` as never })).toBe(account);
    // alice's vote was cast with her passkey.
    const votes = done.activity.votes ?? [];
    expect(votes.map((v) => v.userId).sort()).toEqual([alice, bob.userId].sort());
    await h.screenshot('activities-after-approval');
  });

  it('shows the refusal of a tampered stamp', async () => {
    const { page } = h;
    await page.route('**/public/v1/query/list_activities', async (route) => {
      const headers = route.request().headers();
      const stamp = JSON.parse(headers['x-stamp-webauthn'] as string) as { signature: string };
      const sig = Buffer.from(stamp.signature, 'base64url');
      sig[sig.length - 1] = (sig[sig.length - 1] as number) ^ 1;
      stamp.signature = sig.toString('base64url');
      await route.continue({ headers: { ...headers, 'x-stamp-webauthn': JSON.stringify(stamp) } });
    });
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect
      .poll(() => page.getByRole('alert').first().textContent())
      .toMatch(/could not verify WebAuthN signature/);
    await h.screenshot('tampered-stamp');
    await page.unroute('**/public/v1/query/list_activities');
  });

  it('renders every section, with screenshots and no serious accessibility violations', async () => {
    const { page } = h;
    for (const [name, heading] of [
      ['Policies', 'Policies'],
      ['Organization', /Organization/],
      ['Webhooks', 'Webhooks'],
      ['Auth proxy', 'Auth proxy'],
      ['Activities', 'Activities'],
    ] as const) {
      await page.getByRole('navigation').getByRole('button', { name }).click();
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
      await h.screenshot(name.toLowerCase().replace(/ /g, '-'));
      expect(await h.seriousViolations(), name).toEqual([]);
    }
    // The AUTH section refuses a partial wildcard inline, before anything is sent.
    await page.getByRole('navigation').getByRole('button', { name: 'Auth proxy' }).click();
    await page.getByRole('textbox', { name: 'Allowed origins' }).fill('https://*.example.com');
    await expect.poll(() => page.locator('#origins-error').textContent()).toMatch(/partial wildcard/);
    expect(await page.getByRole('button', { name: 'Save' }).isDisabled()).toBe(true);
  });
});
