/**
 * A gRPC load generator in two shapes: closed loop (N calls always in flight) and open loop (call i
 * sent at t0 + i/rate, whatever the server is doing, at most `maxInFlight` at once — latency then
 * includes queueing as a steady stream of callers sees it, and is measured from the time the call
 * was due, so a call sent late, by the generator's 1 ms tick or for the in-flight cap, counts its
 * wait too). Each call gets its own body from `body(i)`, so no two calls are the same request
 * (identical bodies would be answered from the service's fingerprint cache).
 *
 * The client is HTTP/2 framed by hand (h2client.ts), which spends a fraction of node:http2's CPU a
 * call: the generator shares the two cores with the server it measures. BENCH_CLIENT=node-http2
 * sends the same calls through node:http2 instead (the client of stops 24–43), to compare.
 */
import { connect, constants, type ClientHttp2Session } from 'node:http2';
import { H2GrpcClient, type UnaryCallback } from './h2client.js';

export type LoadShape =
  { kind: 'closed'; concurrency: number } | { kind: 'open'; rate: number; maxInFlight: number };

export interface LoadResult {
  readonly sent: number;
  readonly ok: number;
  readonly failed: number;
  readonly seconds: number;
  /** Latencies of successful calls, ms, sorted ascending. */
  readonly latencies: number[];
  /**
   * Open loop: how late each call went out after it was due, ms, sorted ascending (the 1 ms tick,
   * the cap, a busy loop). Its latency counts from when it was due, so this is the generator's
   * share of it. Empty for a closed loop.
   */
  readonly lateness: number[];
}

export async function runLoad(opts: {
  authority: string;
  path: string;
  body: (i: number) => Buffer;
  shape: LoadShape;
  seconds: number;
  connections: number;
  /** Called for each successful call with its response message (the gRPC frame's payload). */
  onOk?: (i: number, message: Buffer, startedMs: number) => void;
}): Promise<LoadResult> {
  const conns = await Promise.all(
    Array.from({ length: opts.connections }, () =>
      openConnection(opts.authority, opts.path, opts.onOk !== undefined),
    ),
  );
  const latencies: number[] = [];
  const lateness: number[] = [];
  let sent = 0;
  let ok = 0;
  let failed = 0;
  let inFlight = 0;
  const t0 = performance.now();
  const deadline = t0 + opts.seconds * 1000;
  await new Promise<void>((done) => {
    let stopped = false;
    const { shape } = opts;
    /**
     * An open loop's calls due by now that its cap lets out. Call i is due at t0 + i/rate: by
     * `now`, calls 0 … floor((now - t0) · rate) are.
     */
    const sendDue = () => {
      if (shape.kind !== 'open') return;
      const due = Math.floor(((performance.now() - t0) / 1000) * shape.rate) + 1;
      while (sent < due && inFlight < shape.maxInFlight) fire(t0 + (sent * 1000) / shape.rate);
    };
    /** `due`: when an open loop's call was due (its latency counts from then). */
    const fire = (due?: number) => {
      const start = due ?? performance.now();
      if (due !== undefined) lateness.push(performance.now() - due);
      const i = sent++;
      inFlight++;
      const onOk = opts.onOk;
      (conns[i % conns.length] as Connection).call(opts.body(i), (status, message) => {
        inFlight--;
        if (status === '0') {
          ok++;
          latencies.push(performance.now() - start);
          if (onOk !== undefined && message !== undefined) onOk(i, message, start);
        } else failed++;
        if (shape.kind === 'closed' && performance.now() < deadline) fire();
        else if (performance.now() >= deadline) stopped = true;
        else sendDue(); // an open loop's calls due meanwhile, or held back by the cap
        if (stopped && inFlight === 0) done();
      });
    };
    if (shape.kind === 'closed') {
      for (let k = 0; k < shape.concurrency; k++) fire();
      return;
    }
    const tick = () => {
      if (performance.now() >= deadline) {
        stopped = true;
        if (inFlight === 0) done();
        return;
      }
      sendDue();
      setTimeout(tick, 1);
    };
    tick();
  });
  const seconds = (performance.now() - t0) / 1000;
  for (const c of conns) c.close();
  latencies.sort((a, b) => a - b);
  lateness.sort((a, b) => a - b);
  return { sent, ok, failed, seconds, latencies, lateness };
}

/** One connection's unary calls: `frame` is a gRPC length-prefixed request. */
interface Connection {
  call(frame: Buffer, done: UnaryCallback): void;
  close(): void;
}

/** `messages`: whether answers are wanted (node:http2's client then keeps each answer's chunks). */
async function openConnection(authority: string, path: string, messages: boolean): Promise<Connection> {
  if (process.env.BENCH_CLIENT !== 'node-http2') {
    const client = await H2GrpcClient.connect(authority);
    return { call: (frame, done) => client.unary(path, frame, done), close: () => client.close() };
  }
  const session: ClientHttp2Session = connect(`http://${authority}`);
  await new Promise((r) => session.once('connect', r));
  return {
    call(frame, done) {
      const req = session.request({
        [constants.HTTP2_HEADER_METHOD]: 'POST',
        [constants.HTTP2_HEADER_PATH]: path,
        'content-type': 'application/grpc',
        te: 'trailers',
      });
      let status = '';
      req.on('response', (h) => {
        if (h['grpc-status'] !== undefined) status = String(h['grpc-status']);
      });
      req.on('trailers', (t) => (status = String(t['grpc-status'] ?? '')));
      const chunks: Buffer[] = [];
      req.on('data', messages ? (c: Buffer) => chunks.push(c) : () => {});
      req.on('close', () => {
        // One unary answer: a 5-byte prefix (compressed flag, length), then the message.
        const frame = messages ? Buffer.concat(chunks) : undefined;
        const message =
          frame !== undefined && frame.length >= 5 ? frame.subarray(5, 5 + frame.readUInt32BE(1)) : undefined;
        done(status, message);
      });
      req.end(frame);
    },
    close: () => session.close(),
  };
}
