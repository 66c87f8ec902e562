/**
 * Project Wycheproof's signature-verification vectors (extracted by
 * test/vectors/keys/extractWycheproof.ts) against every way an API-key stamp is checked: inline, on
 * libuv's pool and in batches on the verifier thread for P-256; secp256k1 and Ed25519 inline, and
 * Ed25519 also as Solana signatures are checked. Like P-256 stamps (WebCrypto does not normalize
 * s), secp256k1 stamps take either s, as the suite's plain variant does. A valid case must pass and an invalid one must be refused (with the
 * stamp's error, never a crash); an "acceptable" case must be answered the same way by every path.
 */
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyEd25519 } from '../../../chains/solana/ed25519.js';
import { isCountersignError } from '../../shared/errors.js';
import { convertPublicKey } from '../../shared/secp256k1.js';
import { P256Verifier } from './p256Verifier.js';
import {
  verifyApiKeyStamp,
  verifyApiKeyStampOffThread,
  type ApiKeyStamp,
  type StampScheme,
} from './stamp.js';

type Case = [
  tcId: number,
  msg: string,
  sig: string,
  result: 'valid' | 'invalid' | 'acceptable',
  flags: string[],
];
interface Vectors {
  groups: { publicKey: string; tests: Case[] }[];
}
const load = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../../test/vectors/keys/${name}`, import.meta.url), 'utf8')) as Vectors;

const hex = (h: string) => new Uint8Array(Buffer.from(h, 'hex'));

/** SEC1 compressed form of an uncompressed P-256 point (the stamp carries compressed keys). */
function compressP256(uncompressed: string): string {
  const b = hex(uncompressed);
  return `${(b[64] as number) & 1 ? '03' : '02'}${uncompressed.slice(2, 66)}`;
}

/** Accepted (true), refused with a stamp error (false); anything else thrown fails the test. */
async function outcome(check: () => unknown): Promise<boolean> {
  try {
    await check();
    return true;
  } catch (e) {
    if (!isCountersignError(e)) throw e;
    expect(['STAMP_INVALID_SIGNATURE', 'STAMP_MALFORMED']).toContain(e.code);
    return false;
  }
}

function cases(v: Vectors, publicKey: (k: string) => string) {
  return v.groups.flatMap((g) =>
    g.tests.map(([tcId, msg, sig, result, flags]) => ({
      name: `tcId ${tcId} ${result} ${flags.join(',')}`,
      key: publicKey(g.publicKey),
      msg: hex(msg),
      sig,
      result,
    })),
  );
}

const stamp = (scheme: StampScheme, publicKey: string, signature: string): ApiKeyStamp => ({
  kind: 'api_key',
  publicKey,
  scheme,
  signature,
});

const verifier = new P256Verifier();
afterAll(() => verifier.close());

describe('Wycheproof ECDSA P-256 SHA-256 (DER)', () => {
  const all = cases(load('wycheproof-ecdsa-p256-sha256.json'), compressP256);
  it('holds the suite', () => expect(all.length).toBe(484));
  it.each(all)('$name', async ({ key, msg, sig, result }) => {
    const s = stamp('SIGNATURE_SCHEME_TK_API_P256', key, sig);
    const inline = await outcome(() => verifyApiKeyStamp(s, msg));
    expect(await outcome(() => verifyApiKeyStampOffThread(s, msg))).toBe(inline);
    expect(await outcome(() => verifyApiKeyStampOffThread(s, msg, verifier))).toBe(inline);
    if (result !== 'acceptable') expect(inline).toBe(result === 'valid');
  });
});

describe('Wycheproof ECDSA secp256k1 SHA-256 (DER)', () => {
  const all = cases(load('wycheproof-ecdsa-secp256k1-sha256.json'), (k) =>
    Buffer.from(convertPublicKey(hex(k), true)).toString('hex'),
  );
  it('holds the suite', () => expect(all.length).toBe(476));
  it.each(all)('$name', async ({ key, msg, sig, result }) => {
    const accepted = await outcome(() =>
      verifyApiKeyStamp(stamp('SIGNATURE_SCHEME_TK_API_SECP256K1', key, sig), msg),
    );
    if (result !== 'acceptable') expect(accepted).toBe(result === 'valid');
  });
});

describe('Wycheproof Ed25519', () => {
  const all = cases(load('wycheproof-ed25519.json'), (k) => k);
  it('holds the suite', () => expect(all.length).toBe(151));
  it.each(all)('$name', async ({ key, msg, sig, result }) => {
    const accepted = await outcome(() =>
      verifyApiKeyStamp(stamp('SIGNATURE_SCHEME_TK_API_ED25519', key, sig), msg),
    );
    // The Solana adapter checks its transactions' signatures with its own call; it must agree.
    expect(verifyEd25519(hex(sig), msg, hex(key))).toBe(accepted);
    if (result !== 'acceptable') expect(accepted).toBe(result === 'valid');
  });
});
