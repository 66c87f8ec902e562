import { X509Certificate } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createPki } from '../../test/helpers/pki.js';
import { LeanGrpcServer } from './h2/server.js';
import { grpcTls } from './tls.js';

/** The serial number of the certificate the server presents to a new connection. */
function servedSerial(port: number, ca: Buffer, client: { cert: Buffer; key: Buffer }): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({
      host: '127.0.0.1',
      port,
      ca,
      cert: client.cert,
      key: client.key,
      servername: 'localhost',
      ALPNProtocols: ['h2'],
    });
    s.on('secureConnect', () => {
      resolve(s.getPeerCertificate().serialNumber);
      s.destroy();
    });
    s.on('error', reject);
  });
}

describe('grpcTls', () => {
  const dir = mkdtempSync(join(tmpdir(), 'countersign-tls-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(['grpc-js', 'lean'] as const)(
    '%s: serves a rotated certificate after SIGHUP, without a restart',
    async (impl) => {
      const pki = createPki(mkdtempSync(join(dir, `${impl}-`)));
      const client = pki.client('reload-test');
      const second = pki.anotherServer();
      const certFile = join(dir, 'live.crt');
      const keyFile = join(dir, 'live.key');
      copyFileSync(pki.server.certFile, certFile);
      copyFileSync(pki.server.keyFile, keyFile);
      const tls = grpcTls({ certFile, keyFile, clientCaFile: pki.ca.certFile }, pino({ level: 'silent' }));
      const server =
        impl === 'lean'
          ? new LeanGrpcServer({ maxReceiveMessageBytes: 1 << 20, maxSendMessageBytes: 1 << 20 })
          : new grpc.Server();
      try {
        const port =
          server instanceof LeanGrpcServer
            ? await server.listen({ host: '127.0.0.1', port: 0 }, tls.lean)
            : await new Promise<number>((res, rej) =>
                server.bindAsync('127.0.0.1:0', tls.credentials, (e, p) => (e ? rej(e) : res(p))),
              );
        await new Promise((r) => setTimeout(r, 50));
        const before = await servedSerial(port, pki.ca.cert, client);
        copyFileSync(second.certFile, certFile);
        copyFileSync(second.keyFile, keyFile);
        process.kill(process.pid, 'SIGHUP');
        await new Promise((r) => setTimeout(r, 100));
        const after = await servedSerial(port, pki.ca.cert, client);
        expect(after).not.toBe(before);
        expect(after).toBe(new X509Certificate(second.cert).serialNumber);
      } finally {
        server.forceShutdown();
        tls.close();
      }
    },
  );
});
