/**
 * The older login flows @turnkey/sdk-server still exposes (issue 13), driven through its own
 * methods against the embedded service with a real SMTP server: email_auth mails a credential
 * bundle, init_otp_auth / otp_auth trade a mailed code for one, create_read_write_session returns
 * one; each is opened with @turnkey/crypto's decryptCredentialBundle by the client's target key, and
 * the key inside stamps as the right user. create_read_only_session returns a READ_ONLY session JWT
 * that verifySessionJwtSignature accepts with our notarizer key. Wrong codes and bad target keys
 * are refused without writing a key, and no bundle or code reaches the logs.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { p256 } from '@noble/curves/nist.js';
import { Turnkey, TurnkeyRequestError } from '@turnkey/sdk-server';
import { decryptCredentialBundle, generateP256KeyPair, verifySessionJwtSignature } from '@turnkey/crypto';
import { startSmtpSink, type SmtpSink } from './helpers/smtp.js';
import { startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { envelope, post } from './helpers/http.js';

type Client = ReturnType<Turnkey['apiClient']>;

let h: EmbeddedHarness;
let smtp: SmtpSink;
let client: Client;
let parent: string;
let sub: { orgId: string; userId: string };
let keys: Record<string, string>;
const logLines: string[] = [];
const secretsSeen: string[] = [];

const clientFor = (privateKeyHex: string, organizationId: string): Client =>
  new Turnkey({
    apiBaseUrl: h.baseUrl,
    apiPrivateKey: privateKeyHex,
    apiPublicKey: Buffer.from(p256.getPublicKey(Buffer.from(privateKeyHex, 'hex'), true)).toString('hex'),
    defaultOrganizationId: organizationId,
  }).apiClient();

/** The mail's text, quoted-printable decoded (soft line breaks joined, =XX escapes replaced). */
const mailText = async (to: string) =>
  (await smtp.take(to))
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, x: string) => String.fromCharCode(parseInt(x, 16)));

async function refused(p: Promise<unknown>): Promise<TurnkeyRequestError & { code: number }> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(TurnkeyRequestError);
    return e as TurnkeyRequestError & { code: number };
  }
  throw new Error('expected a refusal');
}

beforeAll(async () => {
  smtp = await startSmtpSink();
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logLines.push(chunk.toString('utf8'));
      cb();
    },
  });
  h = await startEmbedded({
    allowPrivateNetwork: true,
    logger: pino({ level: 'debug' }, sink),
    delivery: { smtpUrl: `smtp://127.0.0.1:${smtp.port}`, smtpFrom: 'noreply@countersign.test' },
  });
  parent = h.service.credentials.organizationId;
  keys = (await (await fetch(`${h.baseUrl}/public/v1/discovery/keys`)).json()) as Record<string, string>;
  client = new Turnkey({
    apiBaseUrl: h.baseUrl,
    apiPublicKey: h.service.credentials.apiPublicKey,
    apiPrivateKey: h.service.credentials.apiPrivateKey,
    defaultOrganizationId: parent,
  }).apiClient();
  const r = await post(
    h.baseUrl,
    h.service.credentials,
    '/public/v1/submit/create_sub_organization',
    envelope('ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8', parent, {
      subOrganizationName: 'legacy user',
      rootUsers: [
        {
          userName: 'lee',
          userEmail: 'lee@example.com',
          apiKeys: [],
          authenticators: [],
          oauthProviders: [],
        },
      ],
      rootQuorumThreshold: 1,
    }),
  );
  const res = (
    r.json.activity as {
      result: { createSubOrganizationResultV8: { subOrganizationId: string; rootUserIds: string[] } };
    }
  ).result.createSubOrganizationResultV8;
  sub = { orgId: res.subOrganizationId, userId: res.rootUserIds[0] as string };
});

afterAll(async () => {
  await h?.close();
  await smtp?.close();
});

describe('older login flows through @turnkey/sdk-server', () => {
  it('emailAuth mails a credential bundle that decrypts to a key stamping as the sub-organization user', async () => {
    const target = generateP256KeyPair();
    const r = await client.emailAuth({
      email: 'Lee@Example.com',
      targetPublicKey: target.publicKeyUncompressed,
      emailCustomization: { appName: 'Legacy', magicLinkTemplate: 'https://app.example.com/auth?bundle=%s' },
    });
    expect(r.userId).toBe(sub.userId);
    const text = await mailText('lee@example.com');
    const bundle = /bundle=([1-9A-HJ-NP-Za-km-z]+)/.exec(text)?.[1] as string;
    expect(bundle).toBeDefined();
    secretsSeen.push(bundle);
    const privateKey = decryptCredentialBundle(bundle, target.privateKey);
    secretsSeen.push(privateKey);
    const who = await clientFor(privateKey, sub.orgId).getWhoami({});
    expect(who).toMatchObject({ organizationId: sub.orgId, userId: sub.userId });
    const key = (await h.service.store.listApiKeys(sub.userId)).find((k) => k.id === r.apiKeyId);
    expect(key?.expiresAtMs).not.toBeNull();
    // Another target key cannot open it.
    expect(() => decryptCredentialBundle(bundle, generateP256KeyPair().privateKey)).toThrow();
  });

  it('initOtpAuth mails a code; otpAuth returns a credential bundle for the contact’s user', async () => {
    const { otpId } = await client.initOtpAuth({
      otpType: 'OTP_TYPE_EMAIL',
      contact: 'lee@example.com',
      appName: 'Legacy',
    });
    const code = /code is ([0-9A-Z]+)/.exec(await mailText('lee@example.com'))?.[1] as string;
    secretsSeen.push(code);
    const target = generateP256KeyPair();
    const wrong = await refused(
      client.otpAuth({
        otpId,
        otpCode: code === '000000' ? '111111' : '000000',
        targetPublicKey: target.publicKeyUncompressed,
      }),
    );
    expect(wrong.message).toMatch(/Invalid OTP code/);
    const keysBefore = (await h.service.store.listApiKeys(sub.userId)).length;
    const r = await client.otpAuth({ otpId, otpCode: code, targetPublicKey: target.publicKeyUncompressed });
    expect(r.userId).toBe(sub.userId);
    secretsSeen.push(r.credentialBundle as string);
    const privateKey = decryptCredentialBundle(r.credentialBundle as string, target.privateKey);
    const who = await clientFor(privateKey, sub.orgId).getWhoami({});
    expect(who.userId).toBe(sub.userId);
    expect((await h.service.store.listApiKeys(sub.userId)).length).toBe(keysBefore + 1);
    // The OTP was used: the same code again is refused and writes no key.
    const reuse = await refused(
      client.otpAuth({ otpId, otpCode: code, targetPublicKey: generateP256KeyPair().publicKeyUncompressed }),
    );
    expect(reuse.message).toMatch(/already used/);
    expect((await h.service.store.listApiKeys(sub.userId)).length).toBe(keysBefore + 1);
  });

  it('after 5 wrong codes otpAuth refuses the right one too', async () => {
    const { otpId } = await client.initOtpAuth({
      otpType: 'OTP_TYPE_EMAIL',
      contact: 'lee@example.com',
      appName: 'Legacy',
    });
    const code = /code is ([0-9A-Z]+)/.exec(await mailText('lee@example.com'))?.[1] as string;
    secretsSeen.push(code);
    const target = generateP256KeyPair().publicKeyUncompressed;
    const wrongCode = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++)
      await refused(client.otpAuth({ otpId, otpCode: wrongCode, targetPublicKey: target }));
    const right = await refused(client.otpAuth({ otpId, otpCode: code, targetPublicKey: target }));
    expect(right.message).toMatch(/burnt/);
  });

  it('createReadWriteSession returns a bundle whose key stamps as the caller; invalidateExisting drops the previous one', async () => {
    const t1 = generateP256KeyPair();
    const r1 = await client.createReadWriteSession({
      targetPublicKey: t1.publicKeyUncompressed,
      expirationSeconds: '600',
    });
    expect(r1).toMatchObject({ organizationId: parent, userId: h.service.credentials.userId });
    secretsSeen.push(r1.credentialBundle);
    const k1 = decryptCredentialBundle(r1.credentialBundle, t1.privateKey);
    expect((await clientFor(k1, parent).getWhoami({})).userId).toBe(h.service.credentials.userId);
    const t2 = generateP256KeyPair();
    const r2 = await client.createReadWriteSession({
      targetPublicKey: t2.publicKey, // compressed is accepted too
      invalidateExisting: true,
    });
    secretsSeen.push(r2.credentialBundle);
    const k2 = decryptCredentialBundle(r2.credentialBundle, t2.privateKey);
    expect((await clientFor(k2, parent).getWhoami({})).userId).toBe(h.service.credentials.userId);
    const gone = await refused(clientFor(k1, parent).getWhoami({}));
    expect(gone.message).toMatch(/could not find public key/);
  });

  it('refuses a target key that is not a P-256 point, naming the field', async () => {
    const e = await refused(client.createReadWriteSession({ targetPublicKey: `04${'11'.repeat(64)}` }));
    expect(e.message).toMatch(/parameters\.targetPublicKey/);
    const e2 = await refused(
      client.emailAuth({
        email: 'lee@example.com',
        targetPublicKey: 'zz',
        emailCustomization: { appName: 'Legacy' },
      }),
    );
    expect(e2.message).toMatch(/parameters\.targetPublicKey/);
    const e3 = await refused(
      client.emailAuth({
        email: 'nobody@example.com',
        targetPublicKey: generateP256KeyPair().publicKeyUncompressed,
        emailCustomization: { appName: 'Legacy' },
      }),
    );
    expect(e3.message).toMatch(/parameters\.email/);
  });

  it('createReadOnlySession returns a READ_ONLY session JWT signed by our notarizer key', async () => {
    const r = await client.createReadOnlySession({});
    expect(r).toMatchObject({ organizationId: parent, userId: h.service.credentials.userId });
    expect(await verifySessionJwtSignature(r.session, keys.notarizerPublicKey)).toBe(true);
    const claims = JSON.parse(Buffer.from(r.session.split('.')[1] as string, 'base64url').toString());
    expect(claims).toMatchObject({ session_type: 'SESSION_TYPE_READ_ONLY', exp: Number(r.sessionExpiry) });
  });

  it('the logs hold no credential bundle, key or code', () => {
    expect(secretsSeen.length).toBeGreaterThan(5);
    const logs = logLines.join('');
    expect(logs).toContain('activity completed');
    for (const s of secretsSeen) expect(logs.includes(s), s.slice(0, 8)).toBe(false);
  });
});
