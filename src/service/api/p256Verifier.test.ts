import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { P256Verifier } from './p256Verifier.js';

/** A P-256 key pair with its public key compressed, in hex, as stamps name it. */
function keyPair(): { privateKey: KeyObject; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const y = Buffer.from(jwk.y as string, 'base64url');
  const x = Buffer.from(jwk.x as string, 'base64url');
  return {
    privateKey,
    publicKey: Buffer.concat([Buffer.from([(y[31] as number) & 1 ? 3 : 2]), x]).toString('hex'),
  };
}

const derHex = (body: Uint8Array, key: KeyObject) =>
  sign('sha256', body, { key, dsaEncoding: 'der' }).toString('hex');

describe('P256Verifier', () => {
  it('answers each check of a batch for its own body, key and signature', async () => {
    const verifier = new P256Verifier();
    try {
      const keys = [keyPair(), keyPair(), keyPair()];
      // Bodies as views into one larger buffer, at odd offsets: the thread must see each view's
      // bytes only, not its backing store.
      const backing = Buffer.alloc(64 * 40);
      const checks = Array.from({ length: 40 }, (_, i) => {
        const body = backing.subarray(i * 64 + (i % 7), i * 64 + 50);
        body.fill(i + 1);
        const k = keys[i % 3] as (typeof keys)[number];
        const signature = derHex(body, k.privateKey);
        // Every fourth check is wrong: another key's, another body's, or not a signature.
        if (i % 4 === 1)
          return {
            body,
            publicKey: (keys[(i + 1) % 3] as (typeof keys)[number]).publicKey,
            signature,
            ok: false,
          };
        if (i % 4 === 2)
          return { body: Buffer.from('another body'), publicKey: k.publicKey, signature, ok: false };
        if (i % 4 === 3) return { body, publicKey: k.publicKey, signature: '3006020101020101', ok: false };
        return { body, publicKey: k.publicKey, signature, ok: true };
      });
      const answers = await Promise.all(checks.map((c) => verifier.verify(c.publicKey, c.body, c.signature)));
      expect(answers).toEqual(checks.map((c) => c.ok));
      // Asked in one turn of the loop: the first went alone to an idle thread, the rest in one batch.
      expect(verifier.stats).toEqual({ batches: 2, checks: 40 });
    } finally {
      await verifier.close();
    }
  });

  it('checks on the pool once closed, and still answers correctly', async () => {
    const verifier = new P256Verifier();
    const { privateKey, publicKey } = keyPair();
    const body = Buffer.from('{"type":"ACTIVITY_TYPE_SIGN_TRANSACTION_V2"}');
    await expect(verifier.verify(publicKey, body, derHex(body, privateKey))).resolves.toBe(true);
    await verifier.close();
    await expect(verifier.verify(publicKey, body, derHex(body, privateKey))).resolves.toBe(true);
    await expect(verifier.verify(publicKey, Buffer.from('x'), derHex(body, privateKey))).resolves.toBe(false);
    expect(verifier.stats).toEqual({ batches: 1, checks: 1 });
  });

  it('answers the checks of a batch still out when it is closed, on the pool', async () => {
    const verifier = new P256Verifier();
    const { privateKey, publicKey } = keyPair();
    const body = Buffer.from('held');
    const signature = derHex(body, privateKey);
    const pending = [verifier.verify(publicKey, body, signature), verifier.verify(publicKey, body, '00')];
    // Closed while the batch is out: its checks are answered, by the pool.
    const closing = verifier.close();
    await expect(Promise.all(pending)).resolves.toEqual([true, false]);
    await closing;
  });
});
