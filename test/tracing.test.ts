/**
 * Tracing (issue 16): `serve --otlp-endpoint` against an OTLP/HTTP receiver started here (a plain
 * HTTP server decoding the exporter's JSON). One gRPC SignTransaction carrying a W3C `traceparent`
 * yields spans of that one trace, one per hop, each parented to the hop that called it: the gRPC
 * handler under the caller's span, the public-API call under it, the service's request (on the
 * service thread, reached through the traceparent header) under the call, and the stamp check,
 * policy, signature and store write under the request; the daemon's verification under the gRPC
 * handler. The log lines of that call, on both threads, carry its trace id. A SendEthTransaction
 * against anvil adds the broadcast, in the caller's trace too.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import type { Credentials } from '../src/service/embedded.js';
import { startAnvil } from './helpers/anvil.js';
import { createSignerClient, openSignerStub } from './helpers/grpc-client.js';
import { startServe, type ServeProcess } from './helpers/serve.js';

const dirs: string[] = [];
const servers: ServeProcess[] = [];
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const s of servers) if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill('SIGKILL');
  for (const c of closers) await c();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

/** A span as the OTLP/HTTP JSON encoding carries it (ids in hex). */
interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: number;
  readonly attributes?: readonly { key: string; value: Record<string, unknown> }[];
}
interface ExportRequest {
  readonly resourceSpans: readonly {
    readonly resource?: { readonly attributes?: readonly { key: string; value: { stringValue?: string } }[] };
    readonly scopeSpans: readonly { readonly spans?: readonly OtlpSpan[] }[];
  }[];
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

/** An OTLP/HTTP traces receiver on an ephemeral loopback port, keeping every span with its service name. */
async function startReceiver() {
  const spans: (OtlpSpan & { service: string })[] = [];
  const contentTypes: string[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      contentTypes.push(req.headers['content-type'] ?? '');
      const r = JSON.parse(body) as ExportRequest;
      for (const rs of r.resourceSpans) {
        const service =
          rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
        for (const ss of rs.scopeSpans) for (const s of ss.spans ?? []) spans.push({ ...s, service });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;

describe('tracing with --otlp-endpoint', () => {
  it('exports one trace per SignTransaction with the caller’s trace id, a span per hop, parented correctly, and logs the trace id', async () => {
    const receiver = await startReceiver();
    closers.push(receiver.close);
    const dataDir = mkdtempSync(join(tmpdir(), 'countersign-tracing-'));
    dirs.push(dataDir);
    const serve = await startServe([
      '--data-dir',
      dataDir,
      '--otlp-endpoint',
      receiver.url,
      '--service-name',
      'signer-traced',
    ]);
    servers.push(serve);
    const creds = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as Credentials;
    const eth = creds.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')?.address as string;

    const traceId = randomBytes(16).toString('hex');
    const callerSpanId = randomBytes(8).toString('hex');
    const client = createSignerClient({
      address: serve.ready.grpc,
      metadata: { traceparent: `00-${traceId}-${callerSpanId}-01` },
    });
    const r = await client.signTransaction({
      signWith: eth,
      mode: 'SIGNING_MODE_SIGN_TRANSACTION',
      ethereum: {
        type: 'ETHEREUM_TRANSACTION_TYPE_EIP1559',
        chainId: '31337',
        nonce: '0',
        to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
        value: '1',
        gasLimit: '21000',
        maxFeePerGas: '2000000000',
        maxPriorityFeePerGas: '1000000000',
      },
    });
    expect(r.ok, JSON.stringify(r)).toBe(true);
    client.close();

    // SIGTERM drains and flushes both threads' span processors before the process exits.
    serve.proc.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    expect(receiver.contentTypes.every((c) => c.startsWith('application/json'))).toBe(true);

    const ours = receiver.spans.filter((s) => s.traceId === traceId);
    const one = (name: string) => {
      const found = ours.filter((s) => s.name === name);
      expect(
        found.map((s) => s.name),
        `one ${name} span`,
      ).toEqual([name]);
      return found[0] as OtlpSpan & { service: string };
    };
    const grpcSpan = one('grpc.server');
    const call = one('public_api.call');
    const request = one('public_api.request');
    const stamp = one('stamp.check');
    const policy = one('policy.evaluate');
    const sign = one('sign');
    const store = one('store.write');
    const verify = one('verify');
    expect(ours).toHaveLength(8);
    // Parents: the caller's span → gRPC handler → call → request → the service's hops; verify in the daemon.
    expect(grpcSpan.parentSpanId).toBe(callerSpanId);
    expect(call.parentSpanId).toBe(grpcSpan.spanId);
    expect(request.parentSpanId).toBe(call.spanId);
    for (const s of [stamp, policy, sign, store]) expect(s.parentSpanId, s.name).toBe(request.spanId);
    expect(verify.parentSpanId).toBe(grpcSpan.spanId);
    expect(grpcSpan.kind).toBe(SPAN_KIND_SERVER);
    expect(request.kind).toBe(SPAN_KIND_SERVER);
    expect(call.kind).toBe(SPAN_KIND_CLIENT);
    expect(new Set(ours.map((s) => s.spanId)).size).toBe(ours.length);
    for (const s of ours) expect(s.service, s.name).toBe('signer-traced');
    const attr = (s: OtlpSpan, key: string) => s.attributes?.find((a) => a.key === key)?.value.stringValue;
    expect(attr(grpcSpan, 'rpc.method')).toBe('SignTransaction');
    expect(attr(request, 'http.route')).toBe('/public/v1/submit/sign_transaction');

    // The call's log lines, on the daemon's thread and the service's, carry the trace id.
    const lines = serve
      .stderr()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg?: string; trace_id?: string; span_id?: string });
    const traced = lines.filter((l) => l.trace_id === traceId);
    const messages = traced.map((l) => l.msg);
    expect(messages).toContain('transaction signed and verified'); // the daemon
    // …with the call's and the transaction's facts: requestId and rpc from the call, the rest from the request.
    const signedLine = traced.find((l) => l.msg === 'transaction signed and verified') as Record<
      string,
      unknown
    >;
    expect(signedLine).toMatchObject({ rpc: 'SignTransaction', chain: 'ethereum' });
    expect(typeof signedLine['requestId']).toBe('string');
    expect(typeof signedLine['mode']).toBe('string');
    expect(typeof signedLine['txType']).toBe('string');
    expect(typeof signedLine['activityId']).toBe('string');
    expect(signedLine['transactionHash']).toMatch(/^(0x)?[0-9a-f]{64}$/);
    expect(messages).toContain('activity completed'); // the service thread
    const spanIds = new Set(ours.map((s) => s.spanId));
    for (const l of traced) expect(spanIds.has(l.span_id as string), l.msg).toBe(true);
    // Lines outside any call carry none.
    expect(lines.find((l) => l.msg === 'countersign is ready')?.trace_id).toBeUndefined();
  }, 60_000);

  it('puts the broadcast of a SendEthTransaction in the caller’s trace, under its gRPC handler', async () => {
    const receiver = await startReceiver();
    closers.push(receiver.close);
    const anvil = await startAnvil();
    closers.push(() => anvil.stop());
    const dataDir = mkdtempSync(join(tmpdir(), 'countersign-tracing-send-'));
    dirs.push(dataDir);
    const serve = await startServe([
      '--data-dir',
      dataDir,
      '--otlp-endpoint',
      `${receiver.url}/v1/traces`,
      '--chain-rpc',
      `eip155:31337=${anvil.rpcUrl}`,
    ]);
    servers.push(serve);
    const creds = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as Credentials;
    const from = creds.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')?.address as string;
    await fetch(anvil.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'anvil_setBalance',
        params: [from, '0x3635c9adc5dea00000'],
      }),
    });

    const traceId = randomBytes(16).toString('hex');
    const callerSpanId = randomBytes(8).toString('hex');
    type Unary = (
      req: unknown,
      md: grpc.Metadata,
      opts: grpc.CallOptions,
      cb: (err: grpc.ServiceError | null, res?: { sendTransactionStatusId: string }) => void,
    ) => void;
    const stub = openSignerStub<{ SendEthTransaction: Unary }>(serve.ready.grpc);
    const md = new grpc.Metadata();
    md.set('traceparent', `00-${traceId}-${callerSpanId}-01`);
    const res = await new Promise<{ sendTransactionStatusId: string }>((resolve, reject) =>
      stub.SendEthTransaction.call(
        stub,
        {
          from,
          caip2: 'eip155:31337',
          calls: [{ to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', value: '5' }],
        },
        md,
        { deadline: Date.now() + 30_000 },
        (err, r) => (err === null && r !== undefined ? resolve(r) : reject(err ?? new Error('no answer'))),
      ),
    );
    expect(res.sendTransactionStatusId).toMatch(/^[0-9a-f-]{36}$/);
    stub.close();
    // The broadcast follows the answer: wait until anvil has the transaction, then flush by SIGTERM.
    for (;;) {
      const r = await fetch(anvil.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'eth_getTransactionCount',
          params: [from, 'latest'],
        }),
      });
      if (((await r.json()) as { result: string }).result !== '0x0') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    serve.proc.kill('SIGTERM');
    expect(await serve.exited).toBe(0);

    const ours = receiver.spans.filter((s) => s.traceId === traceId);
    const byId = new Map(ours.map((s) => [s.spanId, s]));
    const broadcasts = receiver.spans.filter((s) => s.name === 'broadcast');
    expect(broadcasts).toHaveLength(1);
    const broadcast = broadcasts[0] as OtlpSpan;
    expect(broadcast.traceId).toBe(traceId);
    expect(broadcast.kind).toBe(SPAN_KIND_CLIENT);
    // Its ancestors: up through the service's request and the public-API call to the gRPC handler.
    const chain: string[] = [];
    for (let p = broadcast.parentSpanId; p !== undefined && byId.has(p); p = byId.get(p)?.parentSpanId)
      chain.push(byId.get(p)?.name as string);
    expect(chain).toContain('public_api.request');
    expect(chain).toContain('public_api.call');
    expect(chain.at(-1)).toBe('grpc.server');
    const grpcSpan = ours.find((s) => s.name === 'grpc.server');
    expect(grpcSpan?.parentSpanId).toBe(callerSpanId);
  }, 60_000);

  it('drains and exits 0 when the collector never answers (spans are dropped, with a warning)', async () => {
    // A collector that accepts connections and never answers.
    const sockets: Socket[] = [];
    const silent = createTcpServer((sock) => sockets.push(sock));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    closers.push(async () => {
      sockets.forEach((sock) => sock.destroy());
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    });
    const dataDir = mkdtempSync(join(tmpdir(), 'countersign-tracing-silent-'));
    dirs.push(dataDir);
    const serve = await startServe([
      '--data-dir',
      dataDir,
      '--otlp-endpoint',
      `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
    ]);
    servers.push(serve);
    const creds = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as Credentials;
    const eth = creds.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')?.address as string;
    const client = createSignerClient({ address: serve.ready.grpc });
    const r = await client.signTransaction({
      signWith: eth,
      ethereum: {
        type: 'ETHEREUM_TRANSACTION_TYPE_EIP1559',
        chainId: '1',
        nonce: '0',
        to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
        value: '1',
        gasLimit: '21000',
        maxFeePerGas: '2',
        maxPriorityFeePerGas: '1',
      },
    });
    expect(r.ok).toBe(true);
    client.close();
    serve.proc.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    expect(sockets.length).toBeGreaterThan(0); // the exporter did try
    expect(serve.stderr()).toContain('tracing: the collector did not take the last spans');
    expect(serve.stderr()).toContain('"msg":"stopped"');
  }, 60_000);
});
