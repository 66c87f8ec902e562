/** A throwaway PKI made with the openssl CLI: a CA, a server certificate, client certificates. */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface CertPair {
  readonly certFile: string;
  readonly keyFile: string;
  readonly cert: Buffer;
  readonly key: Buffer;
}

const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });

function newKey(path: string): void {
  openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', path]);
}

function pair(certFile: string, keyFile: string): CertPair {
  return { certFile, keyFile, cert: readFileSync(certFile), key: readFileSync(keyFile) };
}

export interface Pki {
  readonly ca: CertPair;
  /** A server certificate for localhost and 127.0.0.1, signed by the CA. */
  readonly server: CertPair;
  /** Another server certificate for the same names (to rotate to). */
  anotherServer(): CertPair;
  /** A client certificate with this common name, signed by the CA. */
  client(cn: string): CertPair;
  /** A self-signed certificate with this common name (no CA vouches for it). */
  selfSigned(cn: string): CertPair;
}

/** Creates the CA and server certificate in `dir`. */
export function createPki(dir: string): Pki {
  const ca = { cert: join(dir, 'ca.crt'), key: join(dir, 'ca.key') };
  newKey(ca.key);
  openssl([
    'req',
    '-x509',
    '-new',
    '-key',
    ca.key,
    '-out',
    ca.cert,
    '-days',
    '2',
    '-subj',
    '/CN=countersign test CA',
  ]);
  const sign = (name: string, cn: string, ext: string): CertPair => {
    const key = join(dir, `${name}.key`);
    const csr = join(dir, `${name}.csr`);
    const crt = join(dir, `${name}.crt`);
    const extFile = join(dir, `${name}.ext`);
    newKey(key);
    openssl(['req', '-new', '-key', key, '-out', csr, '-subj', `/CN=${cn}`]);
    writeFileSync(extFile, ext);
    openssl([
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      ca.cert,
      '-CAkey',
      ca.key,
      '-CAcreateserial',
      '-out',
      crt,
      '-days',
      '2',
      '-extfile',
      extFile,
    ]);
    return pair(crt, key);
  };
  const serverExt = 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n';
  const server = sign('server', 'localhost', serverExt);
  let n = 0;
  return {
    ca: pair(ca.cert, ca.key),
    server,
    anotherServer: () => sign(`server-${n++}`, 'localhost', serverExt),
    client: (cn) => sign(`client-${n++}`, cn, 'extendedKeyUsage=clientAuth\n'),
    selfSigned: (cn) => {
      const key = join(dir, `self-${n}.key`);
      const crt = join(dir, `self-${n++}.crt`);
      newKey(key);
      openssl(['req', '-x509', '-new', '-key', key, '-out', crt, '-days', '2', '-subj', `/CN=${cn}`]);
      return pair(crt, key);
    },
  };
}
