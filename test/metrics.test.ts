/**
 * `--metrics-listen`: after a mixed run against a real `serve` (a signature on each chain, one
 * refused request, one policy denial, calls shed over the in-flight bound), the scrape shows every
 * family with counts equal to the calls made, latency histograms with their `_bucket` series, the
 * service thread's families aggregated with the main thread's, and Node's process metrics.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha256 } from '@noble/hashes/sha2.js';
import { createBase58check } from '@scure/base';
import * as bitcoin from 'bitcoinjs-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { keccak256, toHex } from 'viem';
import type { Credentials } from '../src/service/embedded.js';
import { createSignerClient, type SignTransactionInput } from './helpers/grpc-client.js';
import { envelope, post } from './helpers/http.js';
import { startServe, type ServeProcess } from './helpers/serve.js';

const dirs: string[] = [];
let server: ServeProcess | undefined;
afterAll(async () => {
  server?.proc.kill('SIGKILL');
  await server?.exited;
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** Prometheus text → samples (label values here never hold quotes or commas). */
function parse(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (m === null) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const kv of (m[2] ?? '').split(',').filter((x) => x !== '')) {
      const [k, v] = kv.split('=') as [string, string];
      labels[k] = v.replace(/^"|"$/g, '');
    }
    out.push({ name: m[1] as string, labels, value: Number(m[3]) });
  }
  return out;
}

const value = (samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number =>
  samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((a, s) => a + s.value, 0);

const has = (samples: readonly Sample[], name: string) => samples.some((s) => s.name === name);

describe('metrics on --metrics-listen', () => {
  it('counts a mixed run exactly, per family, with histograms and process metrics', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'countersign-metrics-'));
    dirs.push(dataDir);
    server = await startServe([
      '--data-dir',
      dataDir,
      '--metrics-listen',
      '127.0.0.1:0',
      '--service-name',
      'signer-a',
      '--grpc-max-in-flight',
      '1',
    ]);
    const ready = server.ready as typeof server.ready & { metrics: string };
    expect(ready.metrics).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const creds = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as Credentials;
    const address = (format: string) =>
      creds.accounts.find((a) => a.addressFormat === format)?.address as string;
    const eth = address('ADDRESS_FORMAT_ETHEREUM');
    const sol = address('ADDRESS_FORMAT_SOLANA');
    const trx = address('ADDRESS_FORMAT_TRON');
    const btc = address('ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH');
    const client = createSignerClient({ address: ready.grpc });

    const ethTx = (nonce: number): SignTransactionInput => ({
      signWith: eth,
      ethereum: {
        type: 'ETHEREUM_TRANSACTION_TYPE_EIP1559',
        chainId: '31337',
        nonce: String(nonce),
        to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
        value: '1',
        gasLimit: '21000',
        maxFeePerGas: '2000000000',
        maxPriorityFeePerGas: '1000000000',
      },
    });
    const lamports = new Uint8Array(12);
    lamports.set([2, 0, 0, 0]);
    new DataView(lamports.buffer).setBigUint64(4, 1000n, true);
    const now = Date.now();
    const psbt = new bitcoin.Psbt({ network: bitcoin.networks.bitcoin });
    psbt.addInput({
      hash: randomBytes(32),
      index: 0,
      witnessUtxo: { script: bitcoin.address.toOutputScript(btc, bitcoin.networks.bitcoin), value: 100_000n },
    });
    psbt.addOutput({ script: bitcoin.address.toOutputScript(btc, bitcoin.networks.bitcoin), value: 90_000n });
    // The helper types only the Ethereum member of the oneof; the wire takes the others.
    const others = [
      {
        chain: 'solana',
        req: {
          signWith: sol,
          solana: {
            feePayer: sol,
            recentBlockhash: sol,
            instructions: [
              {
                programId: '11111111111111111111111111111111',
                accounts: [
                  { pubkey: sol, isSigner: true, isWritable: true },
                  { pubkey: '11111111111111111111111111111112', isSigner: false, isWritable: true },
                ],
                data: lamports,
              },
            ],
          },
        },
      },
      {
        chain: 'tron',
        req: {
          signWith: trx,
          tron: {
            kind: 'TRON_TRANSACTION_KIND_TRX_TRANSFER',
            ownerAddress: trx,
            toAddress: createBase58check(sha256).encode(
              Uint8Array.from([0x41, ...new Uint8Array(20).fill(7)]),
            ),
            amount: '1000',
            refBlockBytes: 'abcd',
            refBlockHash: '0011223344556677',
            expiration: String(now + 60_000),
            timestamp: String(now),
          },
        },
      },
      {
        chain: 'tempo',
        req: {
          signWith: eth,
          mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS',
          tempo: {
            chainId: '31337',
            nonce: '0',
            gasLimit: '500000',
            maxFeePerGas: '20000000000',
            maxPriorityFeePerGas: '1',
            calls: [{ to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', value: '0' }],
            feeToken: '0x20c0000000000000000000000000000000000000',
          },
        },
      },
      {
        chain: 'bitcoin',
        req: {
          signWith: btc,
          mode: 'SIGNING_MODE_SIGN_TRANSACTION',
          bitcoin: { unsigned: psbt.toBuffer(), network: 'BITCOIN_NETWORK_MAINNET', finalize: false },
        },
      },
    ];

    // One at a time (the in-flight bound is 1): each chain signs once, Ethereum twice.
    const signs: Record<string, number> = { ethereum: 2 };
    for (const n of [0, 1]) expect((await client.signTransaction(ethTx(n))).ok).toBe(true);
    for (const o of others) {
      const r = await client.signTransaction(o.req as unknown as SignTransactionInput);
      expect(r.ok, `${o.chain}: ${JSON.stringify(r.ok ? '' : r)}`).toBe(true);
      signs[o.chain] = 1;
    }
    const raw = await client.signRawPayloads({
      signWith: eth,
      payloads: [keccak256(toHex('metrics'))],
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NO_OP',
    });
    expect(raw.ok).toBe(true);
    // A refused request: no transaction at all.
    const refused = await client.signTransaction({ signWith: eth } as SignTransactionInput);
    expect(refused.ok).toBe(false);
    // Calls beyond the in-flight bound of 1 are shed at once.
    const burst = await Promise.all(
      Array.from({ length: 6 }, (_, i) => client.signTransaction(ethTx(10 + i))),
    );
    const shed = burst.filter((r) => !r.ok).length;
    const burstSigned = burst.length - shed;
    expect(shed).toBeGreaterThan(0);
    // A policy denial: root forbids everything, then the daemon asks once more.
    const deny = await post(
      ready.api as string,
      creds,
      '/public/v1/submit/create_policy',
      envelope('ACTIVITY_TYPE_CREATE_POLICY_V3', creds.organizationId, {
        policyName: 'nothing signs',
        effect: 'EFFECT_DENY',
        condition: 'true',
        notes: '',
      }),
    );
    expect(deny.status).toBe(200);
    const denied = await client.signTransaction(ethTx(99));
    expect(denied.ok).toBe(false);
    client.close();

    const res = await fetch(`${ready.metrics}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    const s = parse(text);
    // No family is emitted twice (the two threads' registries are aggregated, not concatenated).
    const helps = text.split('\n').filter((l) => l.startsWith('# HELP '));
    expect(new Set(helps).size).toBe(helps.length);

    const ethOk = signs.ethereum! + burstSigned;
    const okSigns = ethOk + others.length;
    expect(value(s, 'countersign_grpc_requests_total', { method: 'SignTransaction', code: 'OK' })).toBe(
      okSigns,
    );
    expect(value(s, 'countersign_grpc_requests_total', { method: 'SignRawPayloads', code: 'OK' })).toBe(1);
    expect(
      value(s, 'countersign_grpc_requests_total', { method: 'SignTransaction', code: 'POLICY_DENIED' }),
    ).toBe(1);
    const refusedCodes = s.filter(
      (x) =>
        x.name === 'countersign_grpc_requests_total' &&
        x.labels.method === 'SignTransaction' &&
        !['OK', 'POLICY_DENIED'].includes(x.labels.code as string),
    );
    expect(refusedCodes.reduce((a, x) => a + x.value, 0)).toBe(1);
    expect(value(s, 'countersign_grpc_refused_total', { reason: 'in_flight' })).toBe(shed);
    expect(value(s, 'countersign_grpc_request_duration_seconds_count', { method: 'SignTransaction' })).toBe(
      okSigns + 2,
    );
    expect(has(s, 'countersign_grpc_request_duration_seconds_bucket')).toBe(true);

    expect(value(s, 'countersign_signature_verifications_total', { chain: 'ethereum', result: 'ok' })).toBe(
      ethOk,
    );
    for (const o of others)
      expect(value(s, 'countersign_signature_verifications_total', { chain: o.chain, result: 'ok' })).toBe(1);
    expect(
      value(s, 'countersign_signature_verifications_total', { chain: 'raw_payload', result: 'ok' }),
    ).toBe(1);
    expect(value(s, 'countersign_signature_verifications_total', { result: 'failed' })).toBe(0);

    // The service thread: policy outcomes, API errors by code, API and store latencies.
    expect(value(s, 'countersign_policy_decisions_total', { outcome: 'deny' })).toBe(1);
    // Every signature the daemon asked for, plus root's create_policy.
    // Exactly: one allowed activity per signing call that succeeded, SignRawPayloads' and create_policy's.
    expect(value(s, 'countersign_policy_decisions_total', { outcome: 'allow' })).toBe(okSigns + 2);
    expect(value(s, 'countersign_policy_decisions_total', { outcome: 'consensus' })).toBe(0);
    // Each allowed activity completed once (per-type counts add up to the calls that signed).
    expect(value(s, 'countersign_activities_total')).toBe(okSigns + 2);
    expect(value(s, 'countersign_activities_total', { type: 'ACTIVITY_TYPE_CREATE_POLICY_V3' })).toBe(1);
    expect(value(s, 'countersign_activities_total', { type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS' })).toBe(
      1 + 1, // the gRPC SignRawPayloads and Tempo's raw-payloads signature
    );
    // The public API saw every activity the daemon submitted (and the denied one) plus create_policy.
    expect(value(s, 'countersign_api_requests_total', { status: '403' })).toBe(1);
    expect(value(s, 'countersign_api_request_duration_seconds_count')).toBe(
      value(s, 'countersign_api_requests_total'),
    );
    expect(value(s, 'countersign_grpc_in_flight')).toBe(0);
    expect(value(s, 'countersign_api_errors_total', { code: 'POLICY_DENIED' })).toBe(1);
    expect(has(s, 'countersign_api_request_duration_seconds_bucket')).toBe(true);
    expect(value(s, 'countersign_store_transaction_duration_seconds_count')).toBeGreaterThan(0);
    expect(has(s, 'countersign_store_commit_duration_seconds_bucket')).toBe(true);
    // Nothing was sent: the send tracker's backlog is present and empty.
    expect(has(s, 'countersign_send_backlog')).toBe(true);
    expect(value(s, 'countersign_send_backlog')).toBe(0);
    expect(has(s, 'countersign_send_oldest_pending_seconds')).toBe(true);
    // Node's process metrics from the main thread, and the service name on every family.
    expect(has(s, 'countersign_nodejs_eventloop_lag_seconds')).toBe(true);
    expect(has(s, 'countersign_nodejs_heap_size_used_bytes')).toBe(true);
    // The GC histogram is declared from the start; its buckets appear only once a collection has run,
    // which a short test may not see, so the family's TYPE line is what is checked.
    expect(text).toContain('# TYPE countersign_nodejs_gc_duration_seconds histogram');
    expect(
      s.filter((x) => x.name.startsWith('countersign_nodejs')).every((x) => x.labels.service === 'signer-a'),
    ).toBe(true);
    expect(
      s
        .filter((x) => x.name === 'countersign_policy_decisions_total')
        .every((x) => x.labels.service === 'signer-a'),
    ).toBe(true);
    // Only countersign_ families.
    expect(s.every((x) => x.name.startsWith('countersign_'))).toBe(true);
  });
});
