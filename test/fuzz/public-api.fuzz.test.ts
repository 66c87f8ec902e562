/**
 * Fuzzing the public API's HTTP surface (envelope and stamp headers) under fast-check with a fixed
 * seed, bounded runs and a time budget: random paths, methods, content types, bodies (random JSON,
 * envelope-shaped JSON with random members, random text and bytes) and X-Stamp / X-Stamp-Webauthn
 * headers (missing, garbage, base64url of random JSON, stamp-shaped with random members, a valid
 * stamp over another body, a valid stamp over this body) to a real listener on an ephemeral port.
 * Every request gets an answer: a JSON error body with a code and a message, never a 500, and the
 * service keeps answering (no crash, no hang) after the run.
 */
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type EmbeddedHarness } from '../helpers/embedded.js';
import { rawRequest } from '../helpers/raw-http.js';

const SEED = 0x5eed16;
const RUNS = 2000;
const BUDGET_MS = 90_000;
/** A request with no answer after this long is a hang (a guard, not a measurement). */
const HANG_MS = 15_000;

let h: EmbeddedHarness;
beforeAll(async () => {
  h = await startEmbedded();
});
afterAll(async () => {
  await h.close();
});

const send = (
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: Uint8Array,
) => rawRequest(baseUrl, method, path, headers, body, HANG_MS);

const b64url = (s: string) => Buffer.from(s).toString('base64url');
/** Header values Node will put on the wire (visible ASCII and spaces). */
const headerText = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 200,
});

const ACTIVITY_TYPES = [
  'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
  'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS',
  'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
  'ACTIVITY_TYPE_CREATE_WALLET',
  'ACTIVITY_TYPE_CREATE_POLICY_V3',
  'ACTIVITY_TYPE_CREATE_API_KEYS_V2',
  'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2',
  'ACTIVITY_TYPE_APPROVE_ACTIVITY',
];
const PATHS = [
  '/public/v1/submit/sign_raw_payload',
  '/public/v1/submit/sign_raw_payloads',
  '/public/v1/submit/sign_transaction',
  '/public/v1/submit/create_wallet',
  '/public/v1/submit/create_policy',
  '/public/v1/submit/create_api_keys',
  '/public/v1/submit/eth_send_transaction',
  '/public/v1/submit/approve_activity',
  '/public/v1/query/get_activity',
  '/public/v1/query/list_activities',
  '/public/v1/query/whoami',
  '/public/v1/query/get_wallets',
  '/public/v1/query/get_policies',
  '/public/v1/submit/',
  '/public/v1/query/',
];

describe('public API fuzz', () => {
  it('answers random envelopes and stamp headers with a JSON error or a result, never a 500, crash or hang', async () => {
    const creds = h.service.credentials;
    const stamper = new ApiKeyStamper({
      apiPublicKey: creds.apiPublicKey,
      apiPrivateKey: creds.apiPrivateKey,
    });
    const scalar = fc.oneof(fc.string({ maxLength: 40 }), fc.integer(), fc.boolean(), fc.constant(null));
    const json = fc.jsonValue({ maxDepth: 3 });
    const envelopeBody = fc
      .record(
        {
          type: fc.oneof(fc.constantFrom(...ACTIVITY_TYPES), fc.string({ maxLength: 40 }), json),
          timestampMs: fc.oneof(
            fc.constant(String(Date.now())),
            fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }).map(String),
            scalar,
          ),
          organizationId: fc.oneof(fc.constant(creds.organizationId), fc.uuid(), scalar),
          parameters: fc.oneof(
            json,
            fc.record(
              {
                signWith: fc.oneof(fc.constantFrom(...creds.accounts.map((a) => a.address)), scalar),
                payload: fc.oneof(fc.stringMatching(/^(0x)?[0-9a-f]{0,80}$/), scalar),
                encoding: fc.oneof(
                  fc.constantFrom('PAYLOAD_ENCODING_HEXADECIMAL', 'PAYLOAD_ENCODING_TEXT_UTF8'),
                  scalar,
                ),
                hashFunction: fc.oneof(
                  fc.constantFrom('HASH_FUNCTION_NO_OP', 'HASH_FUNCTION_SHA256'),
                  scalar,
                ),
                unsignedTransaction: fc.oneof(fc.stringMatching(/^[0-9a-f]{0,200}$/), scalar),
                type: fc.oneof(fc.constant('TRANSACTION_TYPE_ETHEREUM'), scalar),
              },
              { requiredKeys: [] },
            ),
          ),
          extra: json,
        },
        { requiredKeys: [] },
      )
      .map((o) => JSON.stringify(o));
    const body = fc.oneof(
      { arbitrary: envelopeBody, weight: 6 },
      { arbitrary: json.map((j) => JSON.stringify(j)), weight: 2 },
      { arbitrary: fc.string({ maxLength: 300 }), weight: 1 },
      {
        arbitrary: fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b).toString('latin1')),
        weight: 1,
      },
    );
    type StampKind =
      | { kind: 'valid' }
      | { kind: 'other-body'; other: string }
      | { kind: 'header'; name: string; value: string }
      | { kind: 'none' };
    const stampKind: fc.Arbitrary<StampKind> = fc.oneof(
      { arbitrary: fc.constant({ kind: 'valid' as const }), weight: 4 },
      {
        arbitrary: fc.string({ maxLength: 50 }).map((other) => ({ kind: 'other-body' as const, other })),
        weight: 1,
      },
      { arbitrary: fc.constant({ kind: 'none' as const }), weight: 1 },
      {
        arbitrary: fc
          .tuple(
            fc.constantFrom('X-Stamp', 'X-Stamp-Webauthn'),
            fc.oneof(
              headerText,
              json.map((j) => b64url(JSON.stringify(j))),
              json.map((j) => JSON.stringify(j)),
              fc
                .record(
                  {
                    publicKey: fc.oneof(
                      fc.constant(creds.apiPublicKey),
                      fc.stringMatching(/^[0-9a-f]{0,70}$/),
                      scalar,
                    ),
                    scheme: fc.oneof(
                      fc.constantFrom(
                        'SIGNATURE_SCHEME_TK_API_P256',
                        'SIGNATURE_SCHEME_TK_API_SECP256K1',
                        'SIGNATURE_SCHEME_TK_API_ED25519',
                      ),
                      scalar,
                    ),
                    signature: fc.oneof(fc.stringMatching(/^[0-9a-f]{0,150}$/), scalar),
                    credentialId: fc.oneof(fc.base64String({ maxLength: 40 }), scalar),
                    clientDataJson: fc.oneof(fc.base64String({ maxLength: 80 }), scalar),
                    authenticatorData: fc.oneof(fc.base64String({ maxLength: 80 }), scalar),
                  },
                  { requiredKeys: [] },
                )
                .map((o) => b64url(JSON.stringify(o))),
            ),
          )
          .map(([name, value]) => ({ kind: 'header' as const, name, value })),
        weight: 4,
      },
    );
    const request = fc.record({
      method: fc.oneof(
        { arbitrary: fc.constant('POST'), weight: 9 },
        { arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE', 'OPTIONS'), weight: 1 },
      ),
      path: fc.oneof(
        { arbitrary: fc.constantFrom(...PATHS), weight: 8 },
        { arbitrary: fc.webPath().map((p) => (p.startsWith('/') ? p : `/${p}`)), weight: 1 },
        {
          arbitrary: fc.string({ maxLength: 30 }).map((s) => `/public/v1/submit/${encodeURIComponent(s)}`),
          weight: 1,
        },
      ),
      contentType: fc.oneof(
        { arbitrary: fc.constantFrom('application/json', 'application/json; charset=utf-8'), weight: 8 },
        { arbitrary: fc.constant(undefined), weight: 1 },
        { arbitrary: headerText, weight: 1 },
      ),
      body,
      stamp: stampKind,
    });

    let answered = 0;
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const headers: Record<string, string> = {};
        if (r.contentType !== undefined) headers['content-type'] = r.contentType;
        switch (r.stamp.kind) {
          case 'valid':
          case 'other-body': {
            const s = await stamper.stamp(r.stamp.kind === 'valid' ? r.body : r.stamp.other);
            headers[s.stampHeaderName] = s.stampHeaderValue;
            break;
          }
          case 'header':
            headers[r.stamp.name] = r.stamp.value;
            break;
          case 'none':
            break;
          default: {
            const never: never = r.stamp;
            throw new Error(`unknown stamp kind ${String(never)}`);
          }
        }
        const a = await send(h.baseUrl, r.method, r.path, headers, Buffer.from(r.body, 'utf8'));
        answered++;
        statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
        expect(a.status, `${r.method} ${r.path}: ${a.body.slice(0, 300)}`).not.toBe(500);
        expect(a.status, a.body.slice(0, 300)).toBeLessThan(502); // 501: Turnkey path not served
        if (a.status >= 400 && r.method === 'POST') {
          const err = JSON.parse(a.body) as { code?: unknown; message?: unknown };
          expect(typeof err.message, a.body.slice(0, 300)).toBe('string');
          expect(err.code, a.body.slice(0, 300)).toBeTypeOf('number');
        }
      }),
      { seed: SEED, numRuns: RUNS, interruptAfterTimeLimit: BUDGET_MS, markInterruptAsFailure: false },
    );
    expect(answered).toBeGreaterThan(50);
    // The run reached past the stamp check (some stamped envelopes were judged on their content).
    expect([...statuses.keys()].some((s) => s === 200 || s === 403 || s === 400)).toBe(true);

    // Still serving: a well-formed, stamped query answers.
    const whoamiBody = JSON.stringify({ organizationId: creds.organizationId });
    const s = await stamper.stamp(whoamiBody);
    const ok = await send(
      h.baseUrl,
      'POST',
      '/public/v1/query/whoami',
      { 'content-type': 'application/json', [s.stampHeaderName]: s.stampHeaderValue },
      Buffer.from(whoamiBody),
    );
    expect(ok.status, ok.body).toBe(200);
  }, 180_000);
});
