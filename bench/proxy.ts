/**
 * `npm run bench:proxy`: the auth proxy's OTP endpoints over real HTTP on 127.0.0.1, in front of the
 * embedded service (SQLite in a temp dir), with codes mailed over SMTP to a real smtp-server on
 * loopback, all in one process (the SMTP server's CPU is counted against us).
 *
 * 1. otp_init: requests per second and p50/p99 latency for BENCH_SECONDS, at concurrency 1 and
 *    BENCH_CONCURRENCY, each to a distinct contact (the per-contact limits are not what is measured;
 *    the proxy's limits are raised to their maximum for the run).
 * 2. otp_login: BENCH_LOGINS verification tokens are prepared first (otp_init, the mail, otp_verify;
 *    not timed), for users of BENCH_USERS sub-organizations; then each is traded for a session
 *    through /v1/otp_login_v2, at concurrency 1 and BENCH_CONCURRENCY.
 *
 * Prints numbers only; nothing here asserts a time.
 */
import { createHash } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import { p256 } from '@noble/curves/nist.js';
import { encryptOtpCodeToBundle } from '@turnkey/crypto';
import { startEmbedded } from '../test/helpers/embedded.js';
import { envelope, post } from '../test/helpers/http.js';
import { newApiKey, type ApiKeyPair } from '../test/helpers/api-key.js';
import { startSmtpSink } from '../test/helpers/smtp.js';
import { startProxyOver } from '../test/helpers/proxy.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const LOGINS = Number(process.env.BENCH_LOGINS ?? 400);
const USERS = Number(process.env.BENCH_USERS ?? 20);

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

function report(name: string, concurrency: number, latencies: number[], wallMs: number, failures: number) {
  const s = [...latencies].sort((a, b) => a - b);
  console.log(
    `${name.padEnd(10)} c=${String(concurrency).padEnd(3)} ${String(latencies.length).padStart(6)} ok ${String(failures).padStart(4)} failed  ` +
      `${((latencies.length / wallMs) * 1000).toFixed(1).padStart(8)}/s  p50 ${pct(s, 50).toFixed(1)} ms  p99 ${pct(s, 99).toFixed(1)} ms`,
  );
}

async function main(): Promise<void> {
  const smtp = await startSmtpSink();
  const h = await startEmbedded({
    allowPrivateNetwork: true,
    delivery: { smtpUrl: `smtp://127.0.0.1:${smtp.port}`, smtpFrom: 'noreply@countersign.test' },
  });
  const org = h.service.credentials.organizationId;
  const submit = async (path: string, type: string, parameters: unknown) => {
    const r = await post(
      h.baseUrl,
      h.service.credentials,
      `/public/v1/submit/${path}`,
      envelope(type, org, parameters),
    );
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.json)}`);
    return (r.json.activity as { result: Record<string, Record<string, unknown>> }).result;
  };
  const enabled = await submit('enable_auth_proxy', 'ACTIVITY_TYPE_ENABLE_AUTH_PROXY', {
    requestsPerMinutePerAddress: 1_000_000,
    otpInitPerMinutePerContact: 100_000,
    maxLiveOtpsPerContact: 1000,
  });
  const configId = enabled.enableAuthProxyResult?.configId as string;
  const proxy = await startProxyOver(h.dataDir, h.service);
  const keys = (await (await fetch(`${h.baseUrl}/public/v1/discovery/keys`)).json()) as Record<
    string,
    string
  >;
  const call = async (path: string, body: unknown) => {
    const r = await fetch(`http://${proxy.address}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-auth-proxy-config-id': configId },
      body: JSON.stringify(body),
    });
    return { status: r.status, json: (await r.json()) as Record<string, unknown> };
  };

  console.log(
    `auth proxy bench: ${availableParallelism()} cores, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} (a shared machine reads slower than an idle one)`,
  );

  // 1. otp_init for SECONDS at each concurrency.
  let contactN = 0;
  for (const c of [1, CONCURRENCY]) {
    const latencies: number[] = [];
    let failures = 0;
    const start = performance.now();
    const end = start + SECONDS * 1000;
    await Promise.all(
      Array.from({ length: c }, async () => {
        while (performance.now() < end) {
          const t = performance.now();
          const r = await call('/v1/otp_init', {
            otpType: 'OTP_TYPE_EMAIL',
            contact: `bench${contactN++}@example.com`,
          });
          if (r.status === 200) latencies.push(performance.now() - t);
          else failures++;
        }
      }),
    );
    report('otp_init', c, latencies, performance.now() - start, failures);
    smtp.mails.length = 0;
  }

  // 2. otp_login: users, then tokens (not timed), then logins.
  const emails = Array.from({ length: USERS }, (_, i) => `login${i}@example.com`);
  for (const email of emails)
    await submit('create_sub_organization', 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8', {
      subOrganizationName: `bench ${email}`,
      rootUsers: [{ userName: email, userEmail: email, apiKeys: [], authenticators: [], oauthProviders: [] }],
      rootQuorumThreshold: 1,
    });
  const prepare = async (n: number) => {
    const tokens: { token: string; client: ApiKeyPair }[] = [];
    for (let i = 0; i < n; i++) {
      const contact = emails[i % emails.length] as string;
      const init = await call('/v1/otp_init_v2', { otpType: 'OTP_TYPE_EMAIL', contact });
      const code = /code is ([0-9A-Z]+)/.exec(await smtp.take(contact))?.[1] as string;
      const client = newApiKey();
      const encryptedOtpBundle = await encryptOtpCodeToBundle(
        code,
        init.json.otpEncryptionTargetBundle as string,
        client.apiPublicKey,
        keys.signerPublicKey,
      );
      const v = await call('/v1/otp_verify_v2', { otpId: init.json.otpId, encryptedOtpBundle });
      if (v.status !== 200) throw new Error(`otp_verify_v2: ${v.status} ${JSON.stringify(v.json)}`);
      tokens.push({ token: v.json.verificationToken as string, client });
    }
    return tokens;
  };
  const login = async ({ token, client }: { token: string; client: ApiKeyPair }) => {
    const tokenId = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString())
      .id as string;
    const session = newApiKey();
    const message = JSON.stringify({
      login: { publicKey: session.apiPublicKey },
      tokenId,
      type: 'USAGE_TYPE_LOGIN',
    });
    const signature = Buffer.from(
      p256.sign(createHash('sha256').update(message).digest(), Buffer.from(client.apiPrivateKey, 'hex'), {
        prehash: false,
        format: 'compact',
      }),
    ).toString('hex');
    return call('/v1/otp_login_v2', {
      verificationToken: token,
      publicKey: session.apiPublicKey,
      clientSignature: {
        publicKey: client.apiPublicKey,
        scheme: 'CLIENT_SIGNATURE_SCHEME_API_P256',
        message,
        signature,
      },
    });
  };
  for (const c of [1, CONCURRENCY]) {
    const prepStart = performance.now();
    const tokens = await prepare(LOGINS);
    console.log(
      `(prepared ${tokens.length} verification tokens in ${((performance.now() - prepStart) / 1000).toFixed(1)} s)`,
    );
    const latencies: number[] = [];
    let failures = 0;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: c }, async () => {
        for (let t = tokens.pop(); t !== undefined; t = tokens.pop()) {
          const s = performance.now();
          const r = await login(t);
          if (r.status === 200) latencies.push(performance.now() - s);
          else {
            failures++;
            if (failures === 1) console.log(`first failure: ${r.status} ${String(r.json.message)}`);
          }
        }
      }),
    );
    report('otp_login', c, latencies, performance.now() - start, failures);
  }

  await proxy.close();
  await h.close();
  await smtp.close();
}

await main();
