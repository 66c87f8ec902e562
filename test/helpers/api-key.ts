/** A fresh P-256 API key pair in the form Turnkey's stampers take (compressed public key, scalar). */
import { generateKeyPairSync } from 'node:crypto';

export interface ApiKeyPair {
  apiPublicKey: string;
  apiPrivateKey: string;
}

export function newApiKey(): ApiKeyPair {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' });
  const x = Buffer.from(jwk.x as string, 'base64url');
  const y = Buffer.from(jwk.y as string, 'base64url');
  const prefix = ((y[y.length - 1] as number) & 1) === 1 ? '03' : '02';
  return {
    apiPublicKey: prefix + x.toString('hex'),
    apiPrivateKey: Buffer.from(jwk.d as string, 'base64url')
      .toString('hex')
      .padStart(64, '0'),
  };
}
