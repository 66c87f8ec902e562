/**
 * `npm run bench`: gRPC SignTransaction (EIP-1559) through `countersign serve` on the embedded
 * default, full path (gRPC → daemon → stamped request → service → sign → store → verify), driven by
 * a raw HTTP/2 load generator (bench/load.ts) whose own CPU cost per call is measured and printed;
 * and, in the same run, viem's in-process `privateKeyToAccount(...).signTransaction` loop.
 * Every call signs a different transaction (its own nonce), so nothing is answered from the
 * service's idempotency cache.
 *
 * Prints throughput and p50/p99 latency. Not a test: nothing here asserts a time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bech32 } from '@scure/base';
import { Psbt } from 'bitcoinjs-lib';
import protobuf from 'protobufjs';
import { privateKeyToAccount } from 'viem/accounts';
import { startServe } from '../test/helpers/serve.js';
import { runLoad, type LoadShape } from './load.js';

const DURATION_S = Number(process.env.BENCH_SECONDS ?? 10);

// Requests are encoded once per call with protobufjs from the same proto the daemon serves.
const root = protobuf.loadSync(
  fileURLToPath(new URL('../proto/countersign/v1/signer.proto', import.meta.url)),
);
const SignTransactionRequest = root.lookupType('countersign.v1.SignTransactionRequest');

/** A gRPC length-prefixed frame: uncompressed flag + 4-byte big-endian length + message. */
function frame(message: Record<string, unknown>): Buffer {
  const bytes = SignTransactionRequest.encode(SignTransactionRequest.fromObject(message)).finish();
  const head = Buffer.alloc(5);
  head.writeUInt32BE(bytes.length, 1);
  return Buffer.concat([head, bytes]);
}

const MODE = { SIGN_TRANSACTION: 1, SIGN_RAW_PAYLOADS: 2 } as const;

function ethereumRequest(signWith: string, mode: number, nonce: number): Buffer {
  return frame({
    signWith,
    mode,
    ethereum: {
      type: 3, // EIP-1559
      chainId: '31337',
      nonce: String(nonce),
      to: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
      value: '1000000000000000',
      gasLimit: '21000',
      maxFeePerGas: '2000000000',
      maxPriorityFeePerGas: '1000000000',
    },
  });
}

function solanaRequest(signWith: string, mode: number, n: number): Buffer {
  const data = Buffer.alloc(12);
  data.writeUInt32LE(2, 0); // SystemProgram::Transfer
  data.writeBigUInt64LE(BigInt(1000 + n), 4);
  return frame({
    signWith,
    mode,
    solana: {
      feePayer: signWith,
      recentBlockhash: 'EETubP5AKHgjPAhzPAFcb8BAY1hMH639CWCFTqi3hq1k',
      instructions: [
        {
          programId: '11111111111111111111111111111111',
          accounts: [
            { pubkey: signWith, isSigner: true, isWritable: true },
            { pubkey: 'Hozo7TadHq6PMMiGLGNvgk79Hvj5VTAM7Ny2bamQ2m8q', isSigner: false, isWritable: true },
          ],
          data,
        },
      ],
    },
  });
}

function tronRequest(signWith: string, mode: number, n: number): Buffer {
  return frame({
    signWith,
    mode,
    tron: {
      kind: 1, // TRX transfer
      ownerAddress: signWith,
      toAddress: 'TYBNgWfhGuNzdLtjKtxXTfskAhTbMcqbaG',
      amount: String(1000 + n),
      refBlockBytes: '3b9d',
      refBlockHash: '6e2b9b2a2c3d4e5f',
      expiration: '1795370000000',
      timestamp: '1795369940000',
    },
  });
}

/** A PSBT spending one (made-up) P2WPKH output of the signer's to another address. */
function bitcoinRequest(signWith: string, mode: number, n: number): Buffer {
  const program = Buffer.from(
    bech32.fromWords(bech32.decode(signWith as `${string}1${string}`).words.slice(1)),
  );
  const script = Buffer.concat([Buffer.from([0x00, 0x14]), program]);
  const psbt = new Psbt();
  const txid = Buffer.alloc(32);
  txid.writeUInt32BE(n + 1, 0);
  psbt.addInput({ hash: txid, index: 0, witnessUtxo: { script, value: 100_000n } });
  psbt.addOutput({ script, value: 90_000n - BigInt(n % 1000) });
  return frame({ signWith, mode, bitcoin: { unsigned: psbt.toBuffer(), network: 1 } });
}

function tempoRequest(signWith: string, mode: number, nonce: number): Buffer {
  return frame({
    signWith,
    mode,
    tempo: {
      chainId: '42431',
      nonce: String(nonce),
      gasLimit: '100000',
      maxFeePerGas: '20000000000',
      maxPriorityFeePerGas: '1000000000',
      calls: [
        {
          to: '0x20c0000000000000000000000000000000000001',
          value: '0',
          data: Buffer.from('a9059cbb', 'hex'),
        },
      ],
    },
  });
}

interface Result {
  label: string;
  requests: number;
  seconds: number;
  p50ms: number;
  p99ms: number;
  note?: string;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

async function viemBaseline(): Promise<Result> {
  const account = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
  const tx = {
    type: 'eip1559' as const,
    chainId: 31337,
    to: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8' as const,
    value: 1_000_000_000_000_000n,
    gas: 21000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
  };
  const lat: number[] = [];
  const end = performance.now() + DURATION_S * 1000;
  let n = 0;
  while (performance.now() < end) {
    const t = performance.now();
    await account.signTransaction({ ...tx, nonce: n++ });
    lat.push(performance.now() - t);
  }
  lat.sort((a, b) => a - b);
  return {
    label: 'viem privateKeyToAccount().signTransaction, in-process loop',
    requests: n,
    seconds: DURATION_S,
    p50ms: percentile(lat, 50),
    p99ms: percentile(lat, 99),
  };
}

let nonce = 0;

async function measure(
  label: string,
  grpc: string,
  request: (i: number) => Buffer,
  shape: LoadShape,
): Promise<Result> {
  const load = (seconds: number) =>
    runLoad({
      authority: grpc,
      path: '/countersign.v1.Signer/SignTransaction',
      body: () => request(nonce++),
      shape,
      seconds,
      connections: shape.kind === 'closed' ? Math.min(4, shape.concurrency) : 4,
    });
  await load(2); // warm-up: JIT, connections, SQLite pages
  const cpu0 = process.cpuUsage();
  const r = await load(DURATION_S);
  const cpu = process.cpuUsage(cpu0);
  const clientUs = (cpu.user + cpu.system) / Math.max(1, r.sent);
  if (r.failed > 0) process.stderr.write(`${label}: ${r.failed} calls failed\n`);
  return {
    label,
    requests: r.ok,
    seconds: r.seconds,
    p50ms: percentile(r.latencies, 50),
    p99ms: percentile(r.latencies, 99),
    note: `load generator ${clientUs.toFixed(0)} µs CPU/call`,
  };
}

async function main(): Promise<void> {
  const results: Result[] = [await viemBaseline()];
  const dir = mkdtempSync(join(tmpdir(), 'countersign-bench-'));
  const server = await startServe(['--data-dir', join(dir, 'data'), '--log-level', 'warn']);
  try {
    const account = (format: string) =>
      server.ready.accounts?.find((a) => a.addressFormat === format)?.address as string;
    const eth = account('ADDRESS_FORMAT_ETHEREUM');
    const g = server.ready.grpc;
    const closed = (concurrency: number): LoadShape => ({ kind: 'closed', concurrency });
    const st = MODE.SIGN_TRANSACTION;
    results.push(
      await measure(
        'Ethereum EIP-1559, SIGN_TRANSACTION, 1 in flight',
        g,
        (i) => ethereumRequest(eth, st, i),
        closed(1),
      ),
    );
    const peak = await measure(
      'Ethereum EIP-1559, SIGN_TRANSACTION, 64 in flight',
      g,
      (i) => ethereumRequest(eth, st, i),
      closed(64),
    );
    results.push(peak);
    results.push(
      await measure(
        'Ethereum EIP-1559, SIGN_RAW_PAYLOADS, 64 in flight',
        g,
        (i) => ethereumRequest(eth, MODE.SIGN_RAW_PAYLOADS, i),
        closed(64),
      ),
    );
    const half = Math.floor(peak.requests / peak.seconds / 2);
    results.push(
      await measure(
        `Ethereum EIP-1559, half of peak: ${half}/s offered, open loop`,
        g,
        (i) => ethereumRequest(eth, st, i),
        {
          kind: 'open',
          rate: half,
          maxInFlight: 64,
        },
      ),
    );
    const sol = account('ADDRESS_FORMAT_SOLANA');
    const tron = account('ADDRESS_FORMAT_TRON');
    const btc = account('ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH');
    results.push(
      await measure(
        'Solana System transfer (legacy), 64 in flight',
        g,
        (i) => solanaRequest(sol, st, i),
        closed(64),
      ),
    );
    results.push(
      await measure('Tron TRX transfer, 64 in flight', g, (i) => tronRequest(tron, st, i), closed(64)),
    );
    results.push(
      await measure(
        'Bitcoin PSBT, 1 P2WPKH input, 64 in flight',
        g,
        (i) => bitcoinRequest(btc, st, i),
        closed(64),
      ),
    );
    results.push(
      await measure('Tempo 0x76 call, 64 in flight', g, (i) => tempoRequest(eth, st, i), closed(64)),
    );
  } finally {
    server.proc.kill('SIGTERM');
    await server.exited;
    rmSync(dir, { recursive: true, force: true });
  }

  process.stdout.write(
    '\n| run (gRPC SignTransaction, full path, embedded) | calls | throughput (/s) | p50 (ms) | p99 (ms) | note |\n|---|---:|---:|---:|---:|---|\n',
  );
  for (const r of results)
    process.stdout.write(
      `| ${r.label} | ${r.requests} | ${(r.requests / r.seconds).toFixed(0)} | ${r.p50ms.toFixed(3)} | ${r.p99ms.toFixed(3)} | ${r.note ?? ''} |\n`,
    );
}

await main();
