/** Credentials the service writes into its data dir for local clients (root, daemon signer). */
import { generateKeyPairSync } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Writes a file atomically with mode 0600 and fsyncs it and its directory. */
export function writeSecretFile(dir: string, name: string, content: string): void {
  const tmp = join(dir, `.${name}.${process.pid}.tmp`);
  writeFileSync(tmp, content, { mode: 0o600 });
  const fd = openSync(tmp, 'r');
  fsyncSync(fd);
  closeSync(fd);
  renameSync(tmp, join(dir, name));
  const dfd = openSync(dir, 'r');
  fsyncSync(dfd);
  closeSync(dfd);
}

/** A fresh P-256 API key pair: compressed public key and private scalar, both hex. */
export function newP256ApiKey(): { publicKey: string; privateKey: string } {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' });
  const x = Buffer.from(jwk.x as string, 'base64url');
  const y = Buffer.from(jwk.y as string, 'base64url');
  const d = Buffer.from(jwk.d as string, 'base64url');
  const prefix = ((y[y.length - 1] as number) & 1) === 1 ? '03' : '02';
  return { publicKey: prefix + x.toString('hex'), privateKey: d.toString('hex').padStart(64, '0') };
}
