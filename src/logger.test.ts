import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { CENSOR, createLogger } from './logger.js';
import { CountersignError } from './shared/errors.js';

/** A logger writing into an array of parsed lines (and the raw text, to search for leaks). */
function capture(level = 'trace') {
  const raw: string[] = [];
  const log = createLogger(level, { write: (s: string) => void raw.push(s) });
  const lines = () => raw.map((s) => JSON.parse(s) as Record<string, unknown>);
  return { log, raw, lines };
}

const SECRETS = {
  apiPrivateKey: 'sk-api-1',
  privateKey: 'sk-key-2',
  mnemonic: 'sk-words-3',
  stamp: 'sk-stamp-4',
  body: 'sk-body-5',
  payload: 'sk-payload-6',
  payloads: ['sk-payloads-7'],
  unsignedTransaction: 'sk-unsigned-8',
  signedTransaction: 'sk-signed-9',
};

function expectNoSecret(raw: readonly string[]): void {
  const all = raw.join('');
  for (const v of Object.values(SECRETS).flat()) expect(all, v).not.toContain(v);
}

describe('logger redaction', () => {
  it('censors every secret field at the top of a line and keeps the rest', () => {
    const { log, raw, lines } = capture();
    log.info({ ...SECRETS, rpc: 'SignTransaction', count: 3 }, 'hello');
    const [line] = lines();
    for (const k of Object.keys(SECRETS)) expect(line?.[k], k).toBe(CENSOR);
    expect(line).toMatchObject({ rpc: 'SignTransaction', count: 3, msg: 'hello', service: 'countersign' });
    expectNoSecret(raw);
  });

  it('censors them one level inside any value, and the stamp headers in any case', () => {
    const { log, raw, lines } = capture();
    log.warn(
      {
        req: { body: SECRETS.body, path: '/public/v1/submit/sign_transaction' },
        headers: { 'x-stamp': SECRETS.stamp, 'X-Stamp-WebAuthn': SECRETS.mnemonic, 'content-type': 'json' },
        list: [SECRETS.payload.replace('sk', 'ok')],
      },
      'inner',
    );
    const [line] = lines();
    expect(line?.['req']).toEqual({ body: CENSOR, path: '/public/v1/submit/sign_transaction' });
    expect(line?.['headers']).toEqual({
      'x-stamp': CENSOR,
      'X-Stamp-WebAuthn': CENSOR,
      'content-type': 'json',
    });
    expect(line?.['list']).toEqual(['ok-payload-6']);
    expectNoSecret(raw);
  });

  it("leaves the caller's objects as they were", () => {
    const { log } = capture();
    const fields = { privateKey: 'sk-key-2', req: { body: 'sk-body-5' } };
    const err = Object.assign(new Error('boom'), { payload: 'sk-payload-6' });
    log.info(fields, 'x');
    log.error({ err }, 'y');
    expect(fields).toEqual({ privateKey: 'sk-key-2', req: { body: 'sk-body-5' } });
    expect(err.payload).toBe('sk-payload-6');
  });

  it("censors a child's bindings, and its children's, at the top and one level in", () => {
    const { log, raw, lines } = capture();
    const child = log.child({
      rpc: 'SignTransaction',
      stamp: SECRETS.stamp,
      ctx: { privateKey: SECRETS.privateKey },
    });
    const grandchild = child.child({ mnemonic: SECRETS.mnemonic, requestId: 'r-1' });
    child.info('one');
    grandchild.info({ body: SECRETS.body }, 'two');
    const [one, two] = lines();
    expect(one).toMatchObject({ rpc: 'SignTransaction', stamp: CENSOR, ctx: { privateKey: CENSOR } });
    expect(two).toMatchObject({ rpc: 'SignTransaction', requestId: 'r-1', mnemonic: CENSOR, body: CENSOR });
    expectNoSecret(raw);
  });

  it("keeps an error's type, message and stack and censors its own secret fields", () => {
    const { log, raw, lines } = capture();
    const e = Object.assign(new CountersignError('FIELD_INVALID', 'bad unsignedTransaction'), {
      body: SECRETS.body,
      signedTransaction: SECRETS.signedTransaction,
    });
    log.error({ err: e }, 'failed');
    log.error(Object.assign(new Error('plain'), { payloads: SECRETS.payloads }), 'thrown');
    const [first, second] = lines();
    const err = first?.['err'] as Record<string, unknown>;
    expect(err['type']).toBe('CountersignError');
    expect(err['message']).toBe('bad unsignedTransaction');
    expect(String(err['stack'])).toContain('logger.test');
    expect(err['body']).toBe(CENSOR);
    expect(err['signedTransaction']).toBe(CENSOR);
    expect((second?.['err'] as Record<string, unknown>)['payloads']).toBe(CENSOR);
    expect(second?.['msg']).toBe('thrown');
    expectNoSecret(raw);
  });

  it("censors what pino's own path redaction (the paths it replaced) censors, line for line", () => {
    // The second implementation: pino's `redact` with the wildcard paths the logger used before.
    const paths = Object.keys(SECRETS).flatMap((k) => [k, `*.${k}`]);
    paths.push('headers["x-stamp"]', 'headers["x-stamp-webauthn"]');
    const reference: string[] = [];
    const ref = pino(
      { level: 'trace', base: { service: 'countersign' }, redact: { paths, censor: CENSOR } },
      { write: (s: string) => void reference.push(s) },
    );
    const { log, raw } = capture();
    const cases: Record<string, unknown>[] = [
      { ...SECRETS },
      { a: { ...SECRETS, keep: 1 }, b: 'plain', c: [1, 2], d: null },
      { headers: { 'x-stamp': 's', 'x-stamp-webauthn': 'w', accept: '*/*' }, n: 1 },
      { deep: { inner: { body: 'two levels down is not a field of a value' } } },
      { err: Object.assign(new Error('e'), { mnemonic: 'm', code: 7 }) },
      { activityId: 'a-1', transactionHash: '0x00', chain: 'eip155:1' },
    ];
    for (const c of cases) {
      log.info(c, 'case');
      ref.info(c, 'case');
      ref.child(c).info('bindings');
      log.child(c).info('bindings');
    }
    const strip = (s: string) => {
      const o = JSON.parse(s) as Record<string, unknown>;
      delete o['time'];
      return o;
    };
    // Lines 2k and 2k+1 of ours are (line, child) and of pino's (line, child) in the same order.
    const ours = raw.map(strip);
    const theirs = reference.map(strip);
    for (let i = 0; i < cases.length; i++) {
      expect(ours[2 * i], `case ${i}`).toEqual(theirs[2 * i]);
      expect(ours[2 * i + 1], `child of case ${i}`).toEqual(theirs[2 * i + 1]);
    }
  });
});
