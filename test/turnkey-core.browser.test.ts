/**
 * @turnkey/core's TurnkeyClient (2.7.1, unmodified) in headless Chromium against our auth proxy and
 * public API (issue 13): the page (test/fixtures/turnkey-core-page, bundled by vite here) runs
 * initOtp, the code is read from a real SMTP server's mail, the verification goes through the proxy,
 * then TurnkeyClient.signUpWithOtp (sign-up through the proxy, then its attested stamp_login) with
 * keys held in the browser's IndexedDB, the session lands in its storage, the account is found
 * through the proxy, and the session key stamps a sign_transaction that viem recovers in Node.
 *
 * One step is done outside TurnkeyClient: its verifyOtp checks the OTP target bundle against
 * Turnkey's production key only (no override), so the page encrypts the code with @turnkey/crypto's
 * encryptOtpCodeToBundle and our signer key, and sends it with the client's own proxyVerifyOtpV2.
 */
import { createServer, type Server } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from 'vite';
import { chromium, type Browser, type Page } from 'playwright-core';
import { verifySessionJwtSignature } from '@turnkey/crypto';
import { parseTransaction, recoverTransactionAddress, serializeTransaction, type Hex } from 'viem';
import { CHROMIUM } from './helpers/console-browser.js';
import { startSmtpSink, type SmtpSink } from './helpers/smtp.js';
import { startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import type { AuthProxyListener } from '../src/proxy/proxy.js';
import { enableAuthProxy, startProxyOver } from './helpers/proxy.js';

const PAGE_DIR = fileURLToPath(new URL('./fixtures/turnkey-core-page/', import.meta.url));

let h: EmbeddedHarness;
let smtp: SmtpSink;
let proxy: AuthProxyListener;
let outDir: string;
let site: Server;
let siteUrl: string;
let browser: Browser;
let page: Page;
let keys: Record<string, string>;
let configId: string;

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium, or set CHROMIUM_PATH`);
  outDir = mkdtempSync(join(tmpdir(), 'countersign-core-page-'));
  await build({
    configFile: false,
    logLevel: 'error',
    define: { 'process.env.NODE_ENV': '"production"', global: 'globalThis' },
    build: {
      outDir,
      emptyOutDir: true,
      minify: false,
      lib: { entry: join(PAGE_DIR, 'entry.ts'), formats: ['es'], fileName: () => 'core.js' },
    },
  });
  const html = readFileSync(join(PAGE_DIR, 'index.html'));
  site = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] as string;
    if (path === '/' || path === '/index.html') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return res.end(html);
    }
    const file = join(outDir, path.replace(/^\/+/, ''));
    if (!file.startsWith(outDir) || extname(file) !== '.js' || !existsSync(file)) {
      res.writeHead(404);
      return res.end();
    }
    res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
    res.end(readFileSync(file));
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', () => r()));
  siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}`;

  smtp = await startSmtpSink();
  h = await startEmbedded({
    allowPrivateNetwork: true,
    delivery: { smtpUrl: `smtp://127.0.0.1:${smtp.port}`, smtpFrom: 'noreply@countersign.test' },
  });
  keys = (await (await fetch(`${h.baseUrl}/public/v1/discovery/keys`)).json()) as Record<string, string>;
  configId = await enableAuthProxy(h, h.service.credentials.organizationId, {
    allowedOrigins: [siteUrl],
    appName: 'Core Browser',
  });
  proxy = await startProxyOver(h.dataDir, h.service);

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  page = await (await browser.newContext()).newPage();
  await page.goto(siteUrl);
  await page.waitForFunction(() => 'TurnkeyClient' in globalThis);
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await proxy?.close();
  await h?.close();
  await smtp?.close();
  await new Promise<void>((r) => (site === undefined ? r() : site.close(() => r())));
  if (outDir !== undefined) rmSync(outDir, { recursive: true, force: true });
});

describe('@turnkey/core TurnkeyClient in Chromium', { timeout: 120_000 }, () => {
  it('email OTP sign-up, login and account lookup; the session stamps a sign_transaction viem verifies', async () => {
    const email = 'browser-user@example.com';
    const config = {
      apiBaseUrl: h.baseUrl,
      authProxyUrl: `http://${proxy.address}`,
      authProxyConfigId: configId,
      organizationId: h.service.credentials.organizationId,
    };
    const init = await page.evaluate(
      async ({ config, email }) => {
        const g = globalThis as unknown as Record<string, any>;
        const client = new g.TurnkeyClient(config);
        await client.init();
        g.client = client;
        return await client.initOtp({ otpType: 'OTP_TYPE_EMAIL', contact: email });
      },
      { config, email },
    );
    expect(init.otpId).toMatch(/^[0-9a-f-]{36}$/);
    const code = /code is ([0-9A-Z]+)/.exec(await smtp.take(email))?.[1] as string;

    const out = await page.evaluate(
      async ({ email, code, otpId, bundle, signerPublicKey }) => {
        const g = globalThis as unknown as Record<string, any>;
        const client = g.client;
        const publicKey: string = await client.createApiKeyPair();
        const encryptedOtpBundle = await g.encryptOtpCodeToBundle(code, bundle, publicKey, signerPublicKey);
        const { verificationToken } = await client.httpClient.proxyVerifyOtpV2({ otpId, encryptedOtpBundle });
        const before = await client.httpClient.proxyGetAccount({
          filterType: 'EMAIL',
          filterValue: email,
          verificationToken,
        });
        const signedUp = await client.signUpWithOtp({
          verificationToken,
          contact: email,
          otpType: 'OTP_TYPE_EMAIL',
          createSubOrgParams: {
            customWallet: {
              walletName: 'Default Wallet',
              walletAccounts: [
                {
                  curve: 'CURVE_SECP256K1',
                  pathFormat: 'PATH_FORMAT_BIP32',
                  path: "m/44'/60'/0'/0/0",
                  addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
                },
              ],
            },
          },
        });
        const session = await client.getSession();
        const after = await client.httpClient.proxyGetAccount({
          filterType: 'EMAIL',
          filterValue: email,
          verificationToken,
        });
        const { accounts } = await client.httpClient.getWalletAccounts({
          organizationId: session.organizationId,
          walletId: (await client.httpClient.getWallets({ organizationId: session.organizationId }))
            .wallets[0].walletId,
        });
        return {
          publicKey,
          before,
          after,
          sessionToken: signedUp.sessionToken as string,
          session: {
            organizationId: session.organizationId,
            publicKey: session.publicKey,
            userId: session.userId,
          },
          address: accounts[0].address as string,
        };
      },
      {
        email,
        code,
        otpId: init.otpId,
        bundle: init.otpEncryptionTargetBundle,
        signerPublicKey: keys.signerPublicKey,
      },
    );
    expect(out.before).toEqual({});
    expect(out.after).toEqual({ organizationId: out.session.organizationId });
    expect(out.session.organizationId).not.toBe(h.service.credentials.organizationId);
    expect(out.session.publicKey).toBe(out.publicKey);
    expect(await verifySessionJwtSignature(out.sessionToken, keys.notarizerPublicKey)).toBe(true);

    const unsigned = serializeTransaction({
      type: 'eip1559',
      chainId: 1,
      nonce: 0,
      to: '0x000000000000000000000000000000000000dEaD',
      value: 1n,
      gas: 21000n,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    });
    const signed = await page.evaluate(
      async ({ organizationId, signWith, unsignedTransaction }) => {
        const client = (globalThis as unknown as Record<string, any>).client;
        const r = await client.httpClient.signTransaction({
          organizationId,
          signWith,
          unsignedTransaction,
          type: 'TRANSACTION_TYPE_ETHEREUM',
        });
        return r.signedTransaction as string;
      },
      {
        organizationId: out.session.organizationId,
        signWith: out.address,
        unsignedTransaction: unsigned.slice(2),
      },
    );
    const tx = `0x${signed.replace(/^0x/, '')}` as Hex;
    expect(parseTransaction(tx).value).toBe(1n);
    expect((await recoverTransactionAddress({ serializedTransaction: tx as never })).toLowerCase()).toBe(
      out.address.toLowerCase(),
    );

    // Later, the same user logs in again: a new OTP, TurnkeyClient.loginWithOtp (attested stamp_login).
    const init2 = await page.evaluate(
      async (email) =>
        await (globalThis as unknown as Record<string, any>).client.initOtp({
          otpType: 'OTP_TYPE_EMAIL',
          contact: email,
        }),
      email,
    );
    const code2 = /code is ([0-9A-Z]+)/.exec(await smtp.take(email))?.[1] as string;
    const again = await page.evaluate(
      async ({ code, otpId, bundle, signerPublicKey }) => {
        const g = globalThis as unknown as Record<string, any>;
        const client = g.client;
        const publicKey: string = await client.createApiKeyPair();
        const encryptedOtpBundle = await g.encryptOtpCodeToBundle(code, bundle, publicKey, signerPublicKey);
        const { verificationToken } = await client.httpClient.proxyVerifyOtpV2({ otpId, encryptedOtpBundle });
        const { sessionToken } = await client.loginWithOtp({ verificationToken, sessionKey: 'second' });
        return { publicKey, sessionToken: sessionToken as string };
      },
      {
        code: code2,
        otpId: init2.otpId,
        bundle: init2.otpEncryptionTargetBundle,
        signerPublicKey: keys.signerPublicKey,
      },
    );
    expect(await verifySessionJwtSignature(again.sessionToken, keys.notarizerPublicKey)).toBe(true);
    expect(
      JSON.parse(Buffer.from(again.sessionToken.split('.')[1] as string, 'base64url').toString()),
    ).toMatchObject({
      organization_id: out.session.organizationId,
      user_id: out.session.userId,
      public_key: again.publicKey,
    });
  });
});
