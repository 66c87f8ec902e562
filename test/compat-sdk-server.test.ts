/**
 * Every method of @turnkey/sdk-server's API client, one test each, against the embedded service: a
 * method whose path countersign serves reaches it (an answer, or a clean refusal of the empty input
 * naming a field), never a missing route or a 500; every other method answers UNIMPLEMENTED (code
 * 12) with its path named. The README's list of what is not served is checked against the same set,
 * so it stays true. The behaviour of each served method is tested in its own file.
 */
import { readFileSync } from 'node:fs';
import { Turnkey, TurnkeyRequestError } from '@turnkey/sdk-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publicApiRoute } from '../src/service/api/routes.js';
import { startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';

type Client = ReturnType<Turnkey['apiClient']>;
type Method = (input: Record<string, unknown>) => Promise<unknown>;

// Read once at collection time: the stamp methods name each method's path without sending anything.
const probe = new Turnkey({
  apiBaseUrl: 'http://127.0.0.1:9',
  // Any valid P-256 pair: nothing is sent with it.
  apiPublicKey: '0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798',
  apiPrivateKey: '0000000000000000000000000000000000000000000000000000000000000001',
  defaultOrganizationId: '00000000-0000-4000-8000-000000000000',
}).apiClient();
const METHODS = Object.keys(probe)
  .filter(
    (k) => !k.startsWith('stamp') && typeof (probe as unknown as Record<string, unknown>)[k] === 'function',
  )
  .sort();

async function pathOf(client: Client, method: string): Promise<string> {
  const stamp = (client as unknown as Record<string, Method>)[
    `stamp${method[0]!.toUpperCase()}${method.slice(1)}`
  ];
  if (stamp === undefined) throw new Error(`no stamp method for ${method}`);
  const stamped = (await stamp.call(client, {})) as { url: string };
  return new URL(stamped.url).pathname;
}

describe('@turnkey/sdk-server API client, method by method', () => {
  let h: EmbeddedHarness;
  let client: Client;

  beforeAll(async () => {
    h = await startEmbedded();
    client = new Turnkey({
      apiBaseUrl: h.baseUrl,
      apiPublicKey: h.service.credentials.apiPublicKey,
      apiPrivateKey: h.service.credentials.apiPrivateKey,
      defaultOrganizationId: h.service.credentials.organizationId,
    }).apiClient();
  });
  afterAll(() => h?.close());

  it('has the methods this suite was written against', () => {
    expect(METHODS.length).toBeGreaterThan(150);
  });

  for (const method of METHODS) {
    it(method, async () => {
      const path = await pathOf(client, method);
      expect(path).toMatch(/^\/public\/v1\/(submit|query)\/[a-z0-9_]+$/);
      let outcome: unknown;
      try {
        outcome = await (client as unknown as Record<string, Method>)[method]!.call(client, {});
      } catch (e) {
        outcome = e;
      }
      if (!publicApiRoute(path)) {
        expect(outcome).toBeInstanceOf(TurnkeyRequestError);
        const err = outcome as TurnkeyRequestError & { code: number };
        expect(err.code).toBe(12);
        expect(err.message).toContain(`${path} is part of Turnkey's API but countersign does not serve it`);
        return;
      }
      if (outcome instanceof Error) {
        // The empty input is refused by the method's own checks: a client error with a reason.
        expect(outcome).toBeInstanceOf(TurnkeyRequestError);
        const err = outcome as TurnkeyRequestError & { code: number };
        expect([3, 5, 7, 9]).toContain(err.code);
        expect(err.message).not.toMatch(/unknown (activity|query) path|no route|internal server error/);
      }
    });
  }

  it('the README lists exactly the paths that answer UNIMPLEMENTED', async () => {
    const paths = await Promise.all(METHODS.map((m) => pathOf(client, m)));
    const unserved = paths.filter((p) => !publicApiRoute(p));
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const section = /<!-- unimplemented:start -->([\s\S]*?)<!-- unimplemented:end -->/.exec(readme);
    expect(section, 'README has the unimplemented list between its markers').not.toBeNull();
    const listed = [...(section![1] as string).matchAll(/`([a-z0-9_]+)`/g)].map((m) => m[1]).sort();
    const expected = [...new Set(unserved.map((p) => p.slice(p.lastIndexOf('/') + 1)))].sort();
    expect(listed).toEqual(expected);
  });
});
