/**
 * TLS for the gRPC listener: the server certificate and key (and, for mTLS, the CA that signs
 * client certificates) are read from files and read again on SIGHUP or when a file changes, so a
 * rotated certificate is served without a restart.
 */
import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { CountersignError } from '../shared/errors.js';
import type { LeanTls } from './h2/server.js';

export interface GrpcTlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  /** With it, clients must present a certificate this CA signed (mTLS). */
  readonly clientCaFile?: string | undefined;
}

type CaListener = (u: { caCertificate: Buffer } | null) => void;
type IdentityListener = (u: { certificate: Buffer; privateKey: Buffer } | null) => void;

/** A grpc-js certificate provider that reloads its files on demand. */
class ReloadingCertificates implements grpc.experimental.CertificateProvider {
  readonly #caListeners = new Set<CaListener>();
  readonly #identityListeners = new Set<IdentityListener>();
  #ca: { caCertificate: Buffer } | null = null;
  #identity: { certificate: Buffer; privateKey: Buffer } | null = null;
  readonly changeListeners = new Set<() => void>();

  constructor(
    private readonly files: GrpcTlsFiles,
    private readonly log: Logger,
  ) {
    this.read(true);
  }

  /** Reads the files; at start a failure is fatal, later the last good certificates stay in use. */
  read(first = false): void {
    try {
      const identity = {
        certificate: readFileSync(this.files.certFile),
        privateKey: readFileSync(this.files.keyFile),
      };
      const ca =
        this.files.clientCaFile === undefined
          ? null
          : { caCertificate: readFileSync(this.files.clientCaFile) };
      this.#identity = identity;
      this.#ca = ca;
    } catch (cause) {
      if (first)
        throw new CountersignError(
          'CONFIG_INVALID',
          `--grpc-tls-cert/--grpc-tls-key/--grpc-client-ca: ${(cause as Error).message}`,
          {
            cause,
            field: 'grpc-tls-cert',
          },
        );
      this.log.error(
        { err: cause },
        'TLS files could not be reloaded; the previous certificates stay in use',
      );
      return;
    }
    if (!first) this.log.info('TLS certificates reloaded');
    for (const l of this.#identityListeners) l(this.#identity);
    for (const l of this.#caListeners) l(this.#ca);
    for (const l of this.changeListeners) l();
  }

  /** The files as node:tls server options (the lean gRPC server's secure context). */
  tlsOptions(): { cert: Buffer; key: Buffer; ca?: Buffer; requestCert: boolean } {
    const identity = this.#identity as { certificate: Buffer; privateKey: Buffer };
    return {
      cert: identity.certificate,
      key: identity.privateKey,
      ...(this.#ca === null ? {} : { ca: this.#ca.caCertificate }),
      requestCert: this.#ca !== null,
    };
  }

  // grpc-js registers its watcher only after adding these listeners: the first update must come later.
  addCaCertificateListener(l: CaListener): void {
    this.#caListeners.add(l);
    setImmediate(() => this.#caListeners.has(l) && l(this.#ca));
  }
  removeCaCertificateListener(l: CaListener): void {
    this.#caListeners.delete(l);
  }
  addIdentityCertificateListener(l: IdentityListener): void {
    this.#identityListeners.add(l);
    setImmediate(() => this.#identityListeners.has(l) && l(this.#identity));
  }
  removeIdentityCertificateListener(l: IdentityListener): void {
    this.#identityListeners.delete(l);
  }
}

export interface GrpcTls {
  readonly credentials: grpc.ServerCredentials;
  /** The same files for the lean server: its options, and a listener called after each reload. */
  readonly lean: LeanTls;
  /** Reads the files again (also done on SIGHUP and on file change). */
  reload(): void;
  close(): void;
}

/** Server credentials from the files, reloaded on SIGHUP and when a file changes. */
export function grpcTls(files: GrpcTlsFiles, log: Logger): GrpcTls {
  const provider = new ReloadingCertificates(files, log);
  // grpc-js takes the identity provider first and the (optional) CA provider second.
  const credentials = grpc.experimental.createCertificateProviderServerCredentials(
    provider,
    files.clientCaFile === undefined ? null : provider,
    files.clientCaFile !== undefined,
  );
  const reload = () => provider.read();
  const watched = [
    files.certFile,
    files.keyFile,
    ...(files.clientCaFile === undefined ? [] : [files.clientCaFile]),
  ];
  for (const f of watched) watchFile(f, { interval: 2_000, persistent: false }, reload);
  process.on('SIGHUP', reload);
  return {
    credentials,
    lean: {
      options: () => provider.tlsOptions(),
      onChange: (l) => {
        provider.changeListeners.add(l);
        return () => provider.changeListeners.delete(l);
      },
    },
    reload,
    close() {
      for (const f of watched) unwatchFile(f, reload);
      process.off('SIGHUP', reload);
    },
  };
}
