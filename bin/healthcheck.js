#!/usr/bin/env node
// The image's HEALTHCHECK: asks the gRPC signer's `grpc.health.v1.Health/Check` (overall status)
// and exits 0 only on SERVING. It probes gRPC rather than HTTP because remote mode (--api-url)
// opens no HTTP listener. Target: the first argument, else COUNTERSIGN_GRPC_LISTEN, else the
// default; a 0.0.0.0 / [::] bind is probed on loopback. With COUNTERSIGN_GRPC_TLS_CERT set, the
// server certificate itself is the trust root (the probe runs beside the server it checks).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

const require = createRequire(import.meta.url);
const target = (process.argv[2] ?? process.env.COUNTERSIGN_GRPC_LISTEN ?? '127.0.0.1:50051')
  .replace(/^0\.0\.0\.0:/, '127.0.0.1:')
  .replace(/^\[::\]:/, '[::1]:');
const certFile = process.env.COUNTERSIGN_GRPC_TLS_CERT;
const credentials =
  certFile === undefined || certFile === ''
    ? grpc.credentials.createInsecure()
    : grpc.credentials.createSsl(readFileSync(certFile), null, null, {
        checkServerIdentity: () => undefined,
      });
const def = protoLoader.loadSync(require.resolve('grpc-health-check/proto/health/v1/health.proto'), {
  enums: String,
});
const { Health } = grpc.loadPackageDefinition(def).grpc.health.v1;
const client = new Health(target, credentials);
client.check({ service: '' }, { deadline: Date.now() + 2_500 }, (err, res) => {
  client.close();
  if (err) {
    process.stderr.write(`health check of ${target} failed: ${err.message}\n`);
    process.exit(1);
  }
  process.stdout.write(`${res.status}\n`);
  process.exit(res.status === 'SERVING' ? 0 : 1);
});
