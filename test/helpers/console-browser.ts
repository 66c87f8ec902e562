/**
 * The console in a real browser: the embedded service behind a real HTTP listener that serves
 * /console/, Debian's chromium driven by playwright-core over the system binary, and a WebAuthn
 * virtual authenticator through the DevTools protocol.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import pino from 'pino';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { openEmbeddedService, type EmbeddedService } from '../../src/service/embedded.js';
import { startHttpServer, type HttpListener } from '../../src/service/api/http-server.js';
import { publicApiRoute } from '../../src/service/api/routes.js';
import { CONSOLE_REDEEM_PATH } from '../../src/service/console/invite.js';
import { createInvite } from '../../src/service/console/cli-invite.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Screenshots land here (gitignored), one per page, 1280×800. */
export const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'console');

export interface ConsoleHarness {
  readonly dataDir: string;
  readonly service: EmbeddedService;
  readonly http: HttpListener;
  readonly port: number;
  readonly browser: Browser;
  readonly context: BrowserContext;
  readonly page: Page;
  /** The link `countersign console invite` prints, for `userName`. */
  invite(userName: string): Promise<string>;
  screenshot(name: string): Promise<void>;
  /** axe-core's violations of impact serious or critical on the current page. */
  seriousViolations(): Promise<{ id: string; help: string; nodes: number }[]>;
  close(): Promise<void>;
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export async function startConsoleHarness(): Promise<ConsoleHarness> {
  // No silent skip: CI installs Debian's chromium (.ci/run); elsewhere, install it or set CHROMIUM_PATH.
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium, or set CHROMIUM_PATH`);
  const dataDir = mkdtempSync(join(tmpdir(), 'countersign-console-'));
  const logger = pino({ level: 'silent' });
  const service = await openEmbeddedService({ dataDir, logger });
  const http = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    handler: service.handler,
    logger,
    console: true,
    routeExists: (p) => publicApiRoute(p) || p === CONSOLE_REDEEM_PATH,
  });
  const port = Number(http.address.split(':').pop());
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
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
  mkdirSync(ARTIFACTS, { recursive: true });
  return {
    dataDir,
    service,
    http,
    port,
    browser,
    context,
    page,
    invite: (userName) =>
      createInvite(service, {
        userName,
        root: false,
        consoleOrigin: undefined,
        apiListen: { host: '127.0.0.1', port },
      }),
    screenshot: async (name) => {
      await page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });
    },
    seriousViolations: async () => {
      // Evaluated through the DevTools protocol: the page's CSP (no inline script) stays on.
      await page.evaluate(axeSource);
      const out = (await page.evaluate(async () => {
        const axe = (globalThis as unknown as { axe: { run: () => Promise<unknown> } }).axe;
        return axe.run();
      })) as { violations: { id: string; help: string; impact: string; nodes: unknown[] }[] };
      return out.violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => ({ id: v.id, help: v.help, nodes: v.nodes.length }));
    },
    close: async () => {
      await browser.close();
      await http.close();
      await service.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
