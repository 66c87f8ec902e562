/**
 * `node --import tsx bench/daemon-sign.ts`: the daemon thread's own work for one EIP-1559
 * SignTransaction (SIGN_TRANSACTION mode), measured in one process without gRPC or the service
 * thread, so that a change to the daemon's code shows through the noise of a shared machine.
 *
 * The real embedded service answers 64 distinct requests once (they are recorded); then
 * `signTransaction` runs in a loop against those recorded answers: the request is validated and
 * serialized, the body built and P-256 stamped, the answer parsed, the signed transaction verified
 * (parse, byte comparison, ecdsaRecover against the expected signer, transaction hash), all as in
 * `serve`. What is not here: grpc-js, the postMessage round trip to the service thread, the service.
 * Prints the thread's CPU time per call (process.cpuUsage: this process runs one busy thread) for
 * BENCH_ROUNDS rounds of BENCH_CALLS calls. BENCH_LOG_LEVEL (default warn, as `npm run bench`
 * runs `serve`). Not a test: nothing here asserts a time.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { PublicApiClient } from '../src/client/client.js';
import { ApiKeyStamper } from '../src/client/stamper.js';
import type { DaemonContext } from '../src/daemon/context.js';
import { ExpectedSignerResolver } from '../src/daemon/expected-signer.js';
import type { EthereumTransactionMessage, SignTransactionRequest } from '../src/daemon/proto.js';
import { signTransaction } from '../src/daemon/sign-transaction.js';
import { createLogger } from '../src/logger.js';
import { openEmbeddedService } from '../src/service/embedded.js';
import type { TransportResponse } from '../src/shared/request-handler.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 15_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DISTINCT = 64;

function ethereum(nonce: number): EthereumTransactionMessage {
  return {
    type: 'ETHEREUM_TRANSACTION_TYPE_EIP1559',
    chainId: '31337',
    nonce: String(nonce),
    to: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
    value: '1000000000000000',
    data: Buffer.alloc(0),
    gasLimit: '21000',
    gasPrice: '',
    maxFeePerGas: '2000000000',
    maxPriorityFeePerGas: '1000000000',
    accessList: [],
    maxFeePerBlobGas: '',
    blobVersionedHashes: [],
    authorizationList: [],
    legacyWithoutChainId: false,
    unsigned: Buffer.alloc(0),
  };
}

const dataDir = mkdtempSync(join(tmpdir(), 'countersign-bench-daemon-'));
const service = await openEmbeddedService({ dataDir, logger: pino({ level: 'silent' }) });
try {
  const { credentials } = service;
  const signWith = credentials.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')?.address;
  if (signWith === undefined) throw new Error('the default wallet has no Ethereum account');

  // Recorded answers by nonce: the service answers each request once; the loop replays them.
  const recorded = new Map<number, TransportResponse>();
  let nonce = 0;
  let replay = false;
  const client = new PublicApiClient({
    organizationId: credentials.organizationId,
    stamper: new ApiKeyStamper(credentials),
    summaries: true, // as serve's daemon asks
    transport: {
      async send(req) {
        const known = recorded.get(nonce);
        if (replay && known !== undefined) return known;
        const res = await service.handler(req);
        recorded.set(nonce, res);
        return res;
      },
      async close() {},
    },
  });
  const ctx: DaemonContext = {
    client,
    defaultOrganizationId: credentials.organizationId,
    idempotency: {
      claim: () => {
        throw new Error('no idempotency key is sent');
      },
      refresh: () => {
        throw new Error('no idempotency key is sent');
      },
    },
    signers: new ExpectedSignerResolver(client),
  };
  // As start-daemon.ts: a module child, and per call a child with the rpc and a request id.
  const log = createLogger(
    process.env.BENCH_LOG_LEVEL ?? 'warn',
    pino.destination({ dest: '/dev/null', sync: true }),
  ).child({ module: 'daemon' });

  const run = async (calls: number) => {
    for (let i = 0; i < calls; i++) {
      nonce = i % DISTINCT;
      const req: SignTransactionRequest = {
        organizationId: '',
        signWith,
        idempotencyKey: '',
        mode: 'SIGNING_MODE_SIGN_TRANSACTION',
        feePayerSignWith: '',
        transaction: 'ethereum',
        ethereum: ethereum(nonce),
      };
      const res = await signTransaction(
        ctx,
        { log: log.child({ rpc: 'SignTransaction', requestId: randomUUID() }) },
        req,
      );
      if (res.signer !== signWith) throw new Error(`signed by ${res.signer}, not ${signWith}`);
    }
  };

  await run(DISTINCT);
  replay = true;
  await run(3_000); // warm-up: JIT
  for (let r = 0; r < ROUNDS; r++) {
    const before = process.cpuUsage();
    await run(CALLS);
    const used = process.cpuUsage(before);
    console.log(
      `daemon work: ${((used.user + used.system) / CALLS).toFixed(1)} µs CPU per call (${CALLS} calls)`,
    );
  }
} finally {
  await service.close();
  rmSync(dataDir, { recursive: true, force: true });
}
