/**
 * The lean gRPC server against @grpc/grpc-js's server: the same handlers behind both, the same calls
 * from grpc-js's client, and the answers compared whole (messages, statuses, details, headers and
 * trailers). Then the HTTP/2 rules an untrusted peer meets, spoken frame by frame on a raw socket.
 */
import * as http2 from 'node:http2';
import { connect, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import { createRequire } from 'node:module';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation } from 'grpc-health-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSignerProto } from '../proto.js';
import { encodeHeaders, HpackDecoder } from './hpack.js';
import { LeanGrpcServer } from './server.js';

const proto = loadSignerProto();
const MAX_RECEIVE = 4 * 1024 * 1024;
const MAX_SEND = 16 * 1024 * 1024;

interface Activity {
  activityId: string;
  organizationId: string;
  fingerprint: string;
}

/** Handlers whose behaviour the request picks: the activity id names the case. */
const implementation: grpc.UntypedServiceImplementation = {
  GetActivity(
    call: grpc.ServerUnaryCall<{ activityId: string }, Activity>,
    cb: grpc.sendUnaryData<Activity>,
  ) {
    const id = call.request.activityId;
    const auth = call.metadata.get('authorization')[0];
    const bin = call.metadata.get('x-trace-bin')[0];
    const echo = `${typeof auth === 'string' ? auth : ''}|${Buffer.isBuffer(bin) ? bin.toString('hex') : ''}`;
    if (id === 'error') {
      const md = new grpc.Metadata();
      md.set('countersign-error-code', 'POLICY_DENIED');
      md.set('grpc-status-details-bin', Buffer.alloc(300, 7));
      cb({ code: grpc.status.PERMISSION_DENIED, details: 'denied: 100% sure, naïve', metadata: md });
    } else if (id === 'lone-surrogate') {
      cb({ code: grpc.status.INVALID_ARGUMENT, details: 'bad \uD800 text' });
    } else if (id === 'throw-like') {
      cb(new Error('plain error'));
    } else if (id === 'slow') {
      setTimeout(() => cb(null, { activityId: id, organizationId: '', fingerprint: '' }), 300);
    } else if (id === 'big') {
      cb(null, { activityId: id, organizationId: 'o'.repeat(1 << 20), fingerprint: echo });
    } else if (id === 'too-big') {
      cb(null, { activityId: id, organizationId: 'o'.repeat(MAX_SEND + 1), fingerprint: '' });
    } else if (id === 'trailer') {
      const md = new grpc.Metadata();
      md.set('x-extra', 'yes');
      cb(null, { activityId: id, organizationId: '', fingerprint: '' }, md);
    } else {
      cb(null, { activityId: id, organizationId: `len ${id.length}`, fingerprint: echo });
    }
  },
  WatchActivity(call: grpc.ServerWritableStream<{ activityId: string }, Activity>) {
    const id = call.request.activityId;
    let n = 0;
    const timer = setInterval(() => {
      if (call.cancelled) return clearInterval(timer);
      call.write({ activityId: `${id}-${n}`, organizationId: 'x'.repeat(n * 10_000), fingerprint: '' });
      n++;
      if (n === 5) {
        clearInterval(timer);
        if (id === 'fail') call.emit('error', { code: grpc.status.ABORTED, details: 'stopped' });
        else if (id !== 'forever') call.end();
      }
    }, 5);
    call.on('cancelled', () => {
      clearInterval(timer);
      cancelled.push(id);
    });
  },
};
const cancelled: string[] = [];

function addServices(server: Pick<grpc.Server, 'addService'>) {
  server.addService(proto.signerService, implementation);
  const health = new HealthImplementation({ '': 'SERVING', 'countersign.v1.Signer': 'NOT_SERVING' });
  health.addToServer(server as grpc.Server);
  const healthProto = createRequire(import.meta.url).resolve(
    'grpc-health-check/proto/health/v1/health.proto',
  );
  const pkg = { ...proto.packageDefinition, ...protoLoader.loadSync(healthProto, { keepCase: true }) };
  new ReflectionService(pkg).addToServer(server);
}

type Outcome = {
  value?: unknown;
  code?: number | undefined;
  details?: string | undefined;
  headers?: Record<string, unknown> | undefined;
  trailers?: Record<string, unknown> | undefined;
};
type UnaryMethod = (
  request: unknown,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (err: grpc.ServiceError | null, value: unknown) => void,
) => grpc.ClientUnaryCall;

const norm = (md: grpc.Metadata | undefined) => {
  if (md === undefined) return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(md.getMap())) {
    if (k === 'date') continue; // node:http2 adds one; the lean server does not
    out[k] = Buffer.isBuffer(v) ? `bin:${v.toString('hex')}` : v;
  }
  return out;
};

const Signer = grpc.makeGenericClientConstructor(proto.signerService, 'Signer');

function unary(client: grpc.Client, id: string, opts: grpc.CallOptions = {}, md = new grpc.Metadata()) {
  return new Promise<Outcome>((resolve) => {
    const out: Outcome = {};
    const call = (client as unknown as Record<string, UnaryMethod>).GetActivity!.call(
      client,
      { activityId: id },
      md,
      opts,
      (err: grpc.ServiceError | null, value: unknown) => {
        if (err) {
          out.code = err.code;
          // The client's own deadline message carries its timings.
          out.details = err.details.startsWith('Deadline exceeded after') ? 'client deadline' : err.details;
        } else out.value = value;
      },
    );
    call.on('metadata', (m) => (out.headers = norm(m)));
    call.on('status', (s) => {
      out.trailers = norm(s.metadata);
      out.code ??= s.code;
      setImmediate(() => resolve(out));
    });
  });
}

function watch(client: grpc.Client, id: string, cancelAfter?: number) {
  return new Promise<Outcome & { messages: string[] }>((resolve) => {
    const messages: string[] = [];
    const stream = (
      client as unknown as Record<string, (r: unknown) => grpc.ClientReadableStream<Activity>>
    ).WatchActivity!.call(client, { activityId: id });
    const out: Outcome & { messages: string[] } = { messages };
    stream.on('data', (m: Activity) => {
      messages.push(`${m.activityId}:${m.organizationId.length}`);
      if (cancelAfter !== undefined && messages.length === cancelAfter) stream.cancel();
    });
    stream.on('error', (e: grpc.ServiceError) => {
      out.code = e.code;
      out.details = e.details;
    });
    stream.on('status', (s) => {
      out.code ??= s.code;
      out.trailers = norm(s.metadata);
      setImmediate(() => resolve(out));
    });
  });
}

describe('the lean gRPC server against grpc-js’s, call for call', () => {
  const servers: { name: string; address: string; close(): void }[] = [];
  beforeAll(async () => {
    const lean = new LeanGrpcServer({ maxReceiveMessageBytes: MAX_RECEIVE, maxSendMessageBytes: MAX_SEND });
    addServices(lean);
    const leanPort = await lean.listen({ host: '127.0.0.1', port: 0 });
    const reference = new grpc.Server({
      'grpc.max_receive_message_length': MAX_RECEIVE,
      'grpc.max_send_message_length': MAX_SEND,
    });
    addServices(reference);
    const refPort = await new Promise<number>((res, rej) =>
      reference.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
        e ? rej(e) : res(p),
      ),
    );
    servers.push(
      { name: 'lean', address: `127.0.0.1:${leanPort}`, close: () => lean.forceShutdown() },
      { name: 'grpc-js', address: `127.0.0.1:${refPort}`, close: () => reference.forceShutdown() },
    );
  });
  afterAll(() => servers.forEach((s) => s.close()));

  /** Runs `scenario` against both servers (each with its own client) and returns both outcomes. */
  async function both<T>(scenario: (client: grpc.Client, address: string) => Promise<T>, options = {}) {
    const results: T[] = [];
    for (const s of servers) {
      const client = new Signer(s.address, grpc.credentials.createInsecure(), options);
      try {
        results.push(await scenario(client, s.address));
      } finally {
        client.close();
      }
    }
    return { lean: results[0] as T, reference: results[1] as T };
  }

  it('answers unary calls the same: messages, metadata, errors with binary trailers, plain errors', async () => {
    const md = new grpc.Metadata();
    md.set('authorization', 'Bearer abc');
    md.set('x-trace-bin', Buffer.from([0, 1, 2, 250]));
    const { lean, reference } = await both(async (c) => [
      await unary(c, 'plain'),
      await unary(c, 'with-metadata', {}, md),
      await unary(c, 'x'.repeat(5000)),
      await unary(c, 'error'),
      await unary(c, 'throw-like'),
      await unary(c, 'trailer'),
    ]);
    expect(lean).toEqual(reference);
    expect(lean[1]!.value).toMatchObject({ fingerprint: 'Bearer abc|000102fa' });
    expect(lean[3]).toMatchObject({
      code: grpc.status.PERMISSION_DENIED,
      details: 'denied: 100% sure, naïve',
    });
    expect(lean[3]!.trailers).toMatchObject({
      'countersign-error-code': 'POLICY_DENIED',
      'grpc-status-details-bin': `bin:${'07'.repeat(300)}`,
    });
  });

  it('sends a status message with a lone surrogate as U+FFFD (grpc-js’s encodeURI would throw)', async () => {
    const client = new Signer(servers[0]!.address, grpc.credentials.createInsecure());
    const out = await unary(client, 'lone-surrogate');
    client.close();
    expect(out).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, details: 'bad \uFFFD text' });
  });

  it('sends a 1 MiB answer through flow control, and refuses one over the send limit', async () => {
    const { lean, reference } = await both(async (c) => [await unary(c, 'big'), await unary(c, 'too-big')]);
    expect(lean).toEqual(reference);
    expect((lean[0]!.value as Activity).organizationId.length).toBe(1 << 20);
    expect(lean[1]!.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
  });

  it('reads a 3 MiB request across window updates, refuses a 5 MiB one, and reads gzip', async () => {
    const { lean, reference } = await both(async (c) => [
      await unary(c, 'r'.repeat(3 << 20)),
      await unary(c, 'r'.repeat(5 << 20)),
    ]);
    expect(lean).toEqual(reference);
    expect(lean[0]!.value).toMatchObject({ organizationId: `len ${3 << 20}` });
    expect(lean[1]).toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED });
    const gzip = await both(async (c) => [await unary(c, 'g'.repeat(100_000))], {
      'grpc.default_compression_algorithm': 2,
    });
    expect(gzip.lean).toEqual(gzip.reference);
    expect(gzip.lean[0]!.value).toMatchObject({ organizationId: 'len 100000' });
  });

  it('ends a call at its deadline with DEADLINE_EXCEEDED', async () => {
    const { lean, reference } = await both(async (c) => [
      await unary(c, 'slow', { deadline: Date.now() + 100 }),
      await unary(c, 'slow', { deadline: Date.now() + 2000 }),
    ]);
    expect(lean).toEqual(reference);
    expect(lean[0]!.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(lean[1]!.code).toBe(grpc.status.OK);
  });

  it('answers an unknown method UNIMPLEMENTED', async () => {
    const { lean, reference } = await both(
      (c) =>
        new Promise<Outcome>((resolve) =>
          c.makeUnaryRequest(
            '/countersign.v1.Signer/NoSuchMethod',
            (x: Buffer) => x,
            (x: Buffer) => x,
            Buffer.alloc(0),
            (err) => resolve({ code: err?.code, details: err?.details }),
          ),
        ),
    );
    expect(lean).toEqual(reference);
    expect(lean.code).toBe(grpc.status.UNIMPLEMENTED);
  });

  it('streams server-streaming answers, ends them with OK or the handler’s error, and tells a handler of a cancel', async () => {
    const { lean, reference } = await both(async (c) => [await watch(c, 'ok'), await watch(c, 'fail')]);
    expect(lean).toEqual(reference);
    expect(lean[0]!.messages).toEqual(['ok-0:0', 'ok-1:10000', 'ok-2:20000', 'ok-3:30000', 'ok-4:40000']);
    expect(lean[1]).toMatchObject({ code: grpc.status.ABORTED, details: 'stopped' });
    cancelled.length = 0;
    const cancel = await both((c) => watch(c, 'forever', 2));
    expect(cancel.lean).toEqual(cancel.reference);
    expect(cancel.lean.code).toBe(grpc.status.CANCELLED);
    await new Promise((r) => setTimeout(r, 50));
    expect(cancelled).toEqual(['forever', 'forever']);
  });

  it('serves health (unary and watch) and reflection (bidirectional) the same', async () => {
    const healthProto = createRequire(import.meta.url).resolve(
      'grpc-health-check/proto/health/v1/health.proto',
    );
    const healthDef = grpc.loadPackageDefinition(
      protoLoader.loadSync(healthProto, { keepCase: true }),
    ) as any;
    const reflectionProto = createRequire(import.meta.url).resolve(
      '@grpc/reflection/build/proto/grpc/reflection/v1/reflection.proto',
    );
    const reflectionDef = grpc.loadPackageDefinition(
      protoLoader.loadSync(reflectionProto, { keepCase: true }),
    ) as any;
    const { lean, reference } = await both(async (_c, address) => {
      const health = new healthDef.grpc.health.v1.Health(address, grpc.credentials.createInsecure());
      const check = await new Promise((r) =>
        health.Check({ service: 'countersign.v1.Signer' }, (e: grpc.ServiceError | null, v: unknown) =>
          r(e ? e.code : v),
        ),
      );
      const unknown = await new Promise((r) =>
        health.Check({ service: 'nope' }, (e: grpc.ServiceError | null, v: unknown) =>
          r(e ? [e.code, e.details] : v),
        ),
      );
      const first = await new Promise((r) => {
        const s = health.Watch({ service: '' });
        s.on('data', (m: unknown) => {
          r(m);
          s.cancel();
        });
        s.on('error', () => {});
      });
      health.close();
      const reflection = new reflectionDef.grpc.reflection.v1.ServerReflection(
        address,
        grpc.credentials.createInsecure(),
      );
      const answers = await new Promise<unknown[]>((resolve) => {
        const got: unknown[] = [];
        const s = reflection.ServerReflectionInfo();
        s.on(
          'data',
          (m: {
            list_services_response?: unknown;
            file_descriptor_response?: { file_descriptor_proto: Buffer[] };
          }) =>
            got.push(m.list_services_response ?? m.file_descriptor_response?.file_descriptor_proto.length),
        );
        s.on('end', () => resolve(got));
        s.write({ list_services: '' });
        s.write({ file_containing_symbol: 'countersign.v1.Signer' });
        s.end();
      });
      reflection.close();
      return { check, unknown, first, answers };
    });
    expect(lean).toEqual(reference);
    expect(lean.check).toEqual({ status: 2 }); // NOT_SERVING
    expect(lean.answers).toHaveLength(2);
  });

  it('listens on both loopback addresses for localhost, as grpc-js does', async () => {
    const server = new LeanGrpcServer({ maxReceiveMessageBytes: MAX_RECEIVE, maxSendMessageBytes: MAX_SEND });
    addServices(server);
    const port = await server.listen({ host: 'localhost', port: 0 });
    const hasV6 = Object.values(networkInterfaces()).some((list) => list?.some((a) => a.address === '::1'));
    try {
      for (const host of hasV6 ? ['127.0.0.1', '[::1]'] : ['127.0.0.1']) {
        const client = new Signer(`${host}:${port}`, grpc.credentials.createInsecure());
        expect((await unary(client, 'both')).value).toMatchObject({ activityId: 'both' });
        client.close();
      }
    } finally {
      server.forceShutdown();
    }
  });

  it('shuts down gracefully: a call in flight is answered, then the server is gone', async () => {
    const server = new LeanGrpcServer({ maxReceiveMessageBytes: MAX_RECEIVE, maxSendMessageBytes: MAX_SEND });
    addServices(server);
    const port = await server.listen({ host: '127.0.0.1', port: 0 });
    const client = new Signer(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    await unary(client, 'warm');
    const slow = unary(client, 'slow');
    await new Promise((r) => setTimeout(r, 50));
    const closed = new Promise<void>((r) => server.tryShutdown(r));
    expect((await slow).code).toBe(grpc.status.OK);
    await closed;
    const after = await unary(client, 'late', { deadline: Date.now() + 1000 });
    expect([grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED]).toContain(after.code);
    client.close();
  });
});

// ---- frame by frame on a raw socket -------------------------------------------------------------

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

function rawFrame(type: number, flags: number, id: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const h = Buffer.alloc(9);
  h.writeUIntBE(payload.length, 0, 3);
  h[3] = type;
  h[4] = flags;
  h.writeUInt32BE(id, 5);
  return Buffer.concat([h, payload]);
}

interface Frame {
  type: number;
  flags: number;
  id: number;
  payload: Buffer;
  /** performance.now() when it was read. */
  at: number;
}

/** A peer that speaks raw frames and collects what the server sends until it closes. */
class RawPeer {
  readonly frames: Frame[] = [];
  #buf = Buffer.alloc(0);
  closed: Promise<void>;
  constructor(readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.#buf = Buffer.concat([this.#buf, d]);
      while (this.#buf.length >= 9) {
        const len = this.#buf.readUIntBE(0, 3);
        if (this.#buf.length < 9 + len) break;
        this.frames.push({
          type: this.#buf[3]!,
          flags: this.#buf[4]!,
          id: this.#buf.readUInt32BE(5) & 0x7fffffff,
          payload: this.#buf.subarray(9, 9 + len),
          at: performance.now(),
        });
        this.#buf = this.#buf.subarray(9 + len);
      }
    });
    socket.on('error', () => {});
    this.closed = new Promise((r) => socket.on('close', () => r()));
  }
  static async open(port: number, handshake = true, settings: Buffer = Buffer.alloc(0)): Promise<RawPeer> {
    const socket = connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    const peer = new RawPeer(socket);
    if (handshake) socket.write(Buffer.concat([PREFACE, rawFrame(4, 0, 0, settings)]));
    return peer;
  }
  send(b: Buffer) {
    this.socket.write(b);
  }
  goaway(): { lastStreamId: number; code: number } | undefined {
    const f = this.frames.find((x) => x.type === 7);
    return f && { lastStreamId: f.payload.readUInt32BE(0), code: f.payload.readUInt32BE(4) };
  }
  async until(pred: () => boolean, ms = 2000) {
    const end = Date.now() + ms;
    while (!pred() && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
    return pred();
  }
}

/** A GetActivity request message (activity id `plain`), length-prefixed. */
const PLAIN = Buffer.from([0, 0, 0, 0, 7, 0x12, 5, ...Buffer.from('plain')]);

/** A SETTINGS payload of one entry: SETTINGS_HEADER_TABLE_SIZE. */
function tableSizeSetting(size: number): Buffer {
  const b = Buffer.alloc(6);
  b.writeUInt16BE(1, 0);
  b.writeUInt32BE(size, 2);
  return b;
}

const requestHeaders = (path = '/countersign.v1.Signer/GetActivity', extra: [string, string][] = []) =>
  encodeHeaders([
    [':method', 'POST'],
    [':scheme', 'http'],
    [':path', path],
    [':authority', 'localhost'],
    ['content-type', 'application/grpc'],
    ['te', 'trailers'],
    ...extra,
  ]);

describe('the lean server’s HTTP/2 rules for an untrusted peer', () => {
  let server: LeanGrpcServer;
  let port: number;
  beforeAll(async () => {
    server = new LeanGrpcServer({
      maxReceiveMessageBytes: MAX_RECEIVE,
      maxSendMessageBytes: MAX_SEND,
      maxConcurrentStreams: 4,
      prefaceTimeoutMs: 200,
    });
    addServices(server);
    port = await server.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => server.forceShutdown());

  it('sends its SETTINGS, acknowledges the peer’s, and answers a PING with the same payload', async () => {
    const peer = await RawPeer.open(port);
    peer.send(rawFrame(6, 0, 0, Buffer.from('12345678')));
    expect(await peer.until(() => peer.frames.some((f) => f.type === 6))).toBe(true);
    const settings = peer.frames.filter((f) => f.type === 4);
    expect(settings.some((f) => f.flags === 0 && f.payload.length % 6 === 0)).toBe(true);
    expect(settings.some((f) => f.flags === 1)).toBe(true);
    const ping = peer.frames.find((f) => f.type === 6)!;
    expect(ping.flags).toBe(1);
    expect(ping.payload.toString()).toBe('12345678');
    peer.socket.destroy();
  });

  it('indexes the fields every answer repeats in the peer’s HPACK table, unless the peer’s table is too small', async () => {
    const expected = [
      [
        ':status',
        '200',
        'content-type',
        'application/grpc+proto',
        'grpc-accept-encoding',
        'identity,deflate,gzip',
        'grpc-encoding',
        'identity',
      ],
      ['grpc-status', '0', 'grpc-message', 'OK'],
    ];
    for (const tableSize of [4096, 0]) {
      const peer = await RawPeer.open(port, true, tableSizeSetting(tableSize));
      const decoder = new HpackDecoder({ maxTableSize: 4096 });
      for (let id = 1; id <= 5; id += 2) {
        peer.send(Buffer.concat([rawFrame(1, 0x4, id, requestHeaders()), rawFrame(0, 0x1, id, PLAIN)]));
        expect(
          await peer.until(() => peer.frames.filter((f) => f.type === 1 && f.id === id).length === 2),
        ).toBe(true);
      }
      const blocks = peer.frames.filter((f) => f.type === 1);
      expect(blocks.map((f) => decoder.decode(f.payload).headers)).toEqual([
        ...expected,
        ...expected,
        ...expected,
      ]);
      // Indexed: one octet a field after the first answer; not indexed: the strings every time.
      if (tableSize === 4096) expect(blocks.slice(2).map((f) => f.payload.length)).toEqual([4, 2, 4, 2]);
      else expect(blocks.slice(2).every((f) => f.payload.length > 10)).toBe(true);
      expect(decoder.tableSize).toBe(tableSize === 4096 ? 282 : 0);
      peer.socket.destroy();
    }
  });

  /** A peer whose first call was answered, then which lowers SETTINGS_HEADER_TABLE_SIZE. */
  async function answeredThenLowered(tableSize: number): Promise<RawPeer> {
    const peer = await RawPeer.open(port);
    peer.send(Buffer.concat([rawFrame(1, 0x4, 1, requestHeaders()), rawFrame(0, 0x1, 1, PLAIN)]));
    expect(await peer.until(() => peer.frames.filter((f) => f.type === 1).length === 2)).toBe(true);
    peer.send(rawFrame(4, 0, 0, tableSizeSetting(tableSize)));
    return peer;
  }

  it('empties the peer’s table with a size update when the peer lowers its limit mid-connection', async () => {
    const peer = await answeredThenLowered(0);
    const decoder = new HpackDecoder({ maxTableSize: 4096 });
    peer.send(Buffer.concat([rawFrame(1, 0x4, 3, requestHeaders()), rawFrame(0, 0x1, 3, PLAIN)]));
    expect(await peer.until(() => peer.frames.filter((f) => f.type === 1).length === 4)).toBe(true);
    const blocks = peer.frames.filter((f) => f.type === 1).map((f) => decoder.decode(f.payload).headers);
    expect(blocks[2]).toEqual(blocks[0]);
    expect(blocks[3]).toEqual(['grpc-status', '0', 'grpc-message', 'OK']);
    expect(decoder.tableSize).toBe(0);
    peer.socket.destroy();
  });

  it('stops crediting the connection window while its streams hold too many request bytes', async () => {
    const strict = new LeanGrpcServer({
      maxReceiveMessageBytes: MAX_RECEIVE,
      maxSendMessageBytes: MAX_SEND,
      maxHeldRequestBytes: 1 << 20,
    });
    addServices(strict);
    const strictPort = await strict.listen({ host: '127.0.0.1', port: 0 });
    try {
      const credits = async (p: number, reset: boolean) => {
        const peer = await RawPeer.open(p);
        const prefix = Buffer.from([0, 0, 0x40, 0, 0]); // a 4 MiB message, never completed
        for (const id of [1, 3, 5, 7]) {
          peer.send(rawFrame(1, 0x4, id, requestHeaders()));
          peer.send(rawFrame(0, 0, id, prefix));
          for (let i = 0; i < 144; i++) peer.send(rawFrame(0, 0, id, Buffer.alloc(16_384)));
        }
        const connectionCredits = () => peer.frames.filter((f) => f.type === 8 && f.id === 0).length;
        await peer.until(() => connectionCredits() > 1, 500);
        const before = connectionCredits();
        if (reset) {
          for (const id of [1, 3, 5, 7]) peer.send(rawFrame(3, 0, id, Buffer.alloc(4)));
          await peer.until(() => connectionCredits() > before, 1000);
        }
        const after = connectionCredits();
        peer.socket.destroy();
        return { before, after };
      };
      // 9 MiB received: the default limit credits it; 1 MiB withholds it until the streams end.
      expect(await credits(port, false)).toEqual({ before: 2, after: 2 });
      expect(await credits(strictPort, true)).toEqual({ before: 1, after: 2 });
    } finally {
      strict.forceShutdown();
    }
  });

  it('acknowledges a lower table limit that still holds its fields with a size update, and keeps indexing', async () => {
    const peer = await answeredThenLowered(1000);
    const decoder = new HpackDecoder({ maxTableSize: 4096 });
    for (const id of [3, 5]) {
      peer.send(Buffer.concat([rawFrame(1, 0x4, id, requestHeaders()), rawFrame(0, 0x1, id, PLAIN)]));
      expect(
        await peer.until(() => peer.frames.filter((f) => f.type === 1 && f.id === id).length === 2),
      ).toBe(true);
    }
    const blocks = peer.frames.filter((f) => f.type === 1);
    const decoded = blocks.map((f) => decoder.decode(f.payload).headers);
    expect(decoded[2]).toEqual(decoded[0]);
    expect(decoded[5]).toEqual(decoded[1]);
    // 1000 = 31 + 969: the prefix all ones, then 969 in 7-bit groups (§5.1); then index bytes.
    expect([...blocks[2]!.payload.subarray(0, 3)]).toEqual([0x3f, 0xc9, 0x07]);
    expect(blocks.slice(3).map((f) => f.payload.length)).toEqual([2, 4, 2]);
    expect(decoder.tableMaxSize).toBe(1000);
    expect(decoder.tableSize).toBe(282);
    peer.socket.destroy();
  });

  it('answers nghttp2 clients that lower their table (node:http2 with headerTableSize 1000 and 0)', async () => {
    for (const headerTableSize of [1000, 0]) {
      const session = http2.connect(`http://127.0.0.1:${port}`, { settings: { headerTableSize } });
      session.on('error', () => {});
      const statuses: string[] = [];
      for (let i = 0; i < 3; i++) {
        statuses.push(
          await new Promise<string>((resolve, reject) => {
            const req = session.request({
              ':method': 'POST',
              ':path': '/countersign.v1.Signer/GetActivity',
              'content-type': 'application/grpc',
              te: 'trailers',
            });
            let data = 0;
            req.on('data', (c: Buffer) => (data += c.length));
            req.on('trailers', (t) => resolve(`${String(t['grpc-status'])}:${data > 0}`));
            req.on('error', reject);
            req.on('close', () => resolve(`closed without trailers (${req.rstCode})`));
            session.once('goaway', (code) => resolve(`GOAWAY ${code}`));
            req.end(PLAIN);
          }),
        );
      }
      session.close();
      expect(statuses).toEqual(['0:true', '0:true', '0:true']);
    }
  });

  it('closes a connection that is not HTTP/2, and one that sends no preface in time', async () => {
    const http1 = await RawPeer.open(port, false);
    http1.send(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    await http1.closed;
    const silent = await RawPeer.open(port, false);
    const t0 = Date.now();
    await silent.closed;
    expect(Date.now() - t0).toBeGreaterThanOrEqual(150);
  });

  it('refuses a frame over 16 KiB and a malformed header block with GOAWAY', async () => {
    const big = await RawPeer.open(port);
    big.send(rawFrame(0, 0, 1, Buffer.alloc(20_000)));
    await big.closed;
    expect(big.goaway()).toMatchObject({ code: 0x6 }); // FRAME_SIZE_ERROR
    const garbage = await RawPeer.open(port);
    garbage.send(rawFrame(1, 0x5, 1, Buffer.from([0x80]))); // indexed field 0
    await garbage.closed;
    expect(garbage.goaway()).toMatchObject({ code: 0x9 }); // COMPRESSION_ERROR
  });

  it('cuts a CONTINUATION flood at 64 KiB of header block', async () => {
    const peer = await RawPeer.open(port);
    peer.send(rawFrame(1, 0, 1, requestHeaders()));
    for (let i = 0; i < 8 && !peer.socket.destroyed; i++)
      peer.send(rawFrame(9, 0, 1, Buffer.alloc(16_000, 0x82)));
    await peer.closed;
    expect(peer.goaway()).toMatchObject({ code: 0xb }); // ENHANCE_YOUR_CALM
  });

  it('refuses streams past SETTINGS_MAX_CONCURRENT_STREAMS', async () => {
    const peer = await RawPeer.open(port);
    for (let id = 1; id <= 11; id += 2) peer.send(rawFrame(1, 0x4, id, requestHeaders()));
    expect(await peer.until(() => peer.frames.filter((f) => f.type === 3).length >= 2)).toBe(true);
    const resets = peer.frames.filter((f) => f.type === 3);
    expect(resets.map((f) => [f.id, f.payload.readUInt32BE(0)])).toEqual([
      [9, 0x7],
      [11, 0x7],
    ]);
    peer.socket.destroy();
  });

  it('answers request metadata over the header list limit RESOURCE_EXHAUSTED, naming the limit', async () => {
    const peer = await RawPeer.open(port);
    const block = requestHeaders(undefined, [
      ['x-big', 'v'.repeat(15_000)],
      ['x-big2', 'w'.repeat(5_000)],
    ]);
    peer.send(rawFrame(1, 0x1, 1, block.subarray(0, 16_000)));
    peer.send(rawFrame(9, 0x4, 1, block.subarray(16_000)));
    expect(await peer.until(() => peer.frames.some((f) => f.type === 1 && f.id === 1))).toBe(true);
    const answer = peer.frames.find((f) => f.type === 1 && f.id === 1)!;
    const text = answer.payload.toString('latin1');
    expect(text).toContain('grpc-status');
    expect(text).toContain('8');
    expect(text).toContain('request%20metadata%20larger%20than%2016384%20bytes');
    peer.socket.destroy();
  });

  it('ends a call at the grpc-timeout the request carries, whatever the handler does', async () => {
    const peer = await RawPeer.open(port);
    const message = Buffer.from([0, 0, 0, 0, 6, 0x12, 4, ...Buffer.from('slow')]);
    peer.send(rawFrame(1, 0x4, 1, requestHeaders(undefined, [['grpc-timeout', '50m']])));
    peer.send(rawFrame(0, 0x1, 1, message));
    expect(await peer.until(() => peer.frames.some((f) => f.type === 1 && f.id === 1))).toBe(true);
    const answer = peer.frames.find((f) => f.type === 1 && f.id === 1)!;
    expect(answer.flags & 0x1).toBe(1);
    expect(answer.payload.toString('latin1')).toContain('Deadline%20exceeded');
    // The handler's late answer is dropped: nothing more on the stream.
    await new Promise((r) => setTimeout(r, 400));
    expect(peer.frames.filter((f) => f.id === 1 && f.type !== 3)).toHaveLength(1);
    peer.socket.destroy();
  });

  it('answers a non-gRPC request 415, and a PING on a stream with GOAWAY', async () => {
    const peer = await RawPeer.open(port);
    peer.send(
      rawFrame(
        1,
        0x5,
        1,
        encodeHeaders([
          [':method', 'POST'],
          [':scheme', 'http'],
          [':path', '/countersign.v1.Signer/GetActivity'],
          ['content-type', 'text/plain'],
        ]),
      ),
    );
    expect(await peer.until(() => peer.frames.some((f) => f.type === 1 && f.id === 1))).toBe(true);
    expect(peer.frames.find((f) => f.type === 1 && f.id === 1)!.payload.toString('latin1')).toContain('415');
    peer.send(rawFrame(2, 0, 3, Buffer.alloc(5))); // PRIORITY on an idle stream is allowed
    peer.send(rawFrame(6, 0, 1, Buffer.alloc(8))); // PING on a stream: connection error
    await peer.closed;
    expect(peer.goaway()).toMatchObject({ code: 0x1 }); // PROTOCOL_ERROR
  });

  it('ends the connection on priority fields that make a stream depend on itself (RFC 9113 §5.3.1)', async () => {
    const onItself = (id: number) => Buffer.from([0, 0, 0, id, 15]); // dependency, weight
    // A PRIORITY frame, and HEADERS with the PRIORITY flag (and padding before the fields).
    const priority = await RawPeer.open(port);
    priority.send(rawFrame(2, 0, 3, Buffer.from([0, 0, 0, 1, 15]))); // on another stream: allowed
    priority.send(rawFrame(2, 0, 5, onItself(5)));
    expect(await priority.until(() => priority.goaway() !== undefined)).toBe(true);
    expect(priority.goaway()).toMatchObject({ code: 0x1 }); // PROTOCOL_ERROR
    await priority.closed;
    const headers = await RawPeer.open(port);
    const padded = Buffer.concat([Buffer.from([2]), onItself(1), requestHeaders(), Buffer.alloc(2)]);
    headers.send(rawFrame(1, 0x4 | 0x8 | 0x20, 1, padded)); // END_HEADERS, PADDED, PRIORITY
    expect(await headers.until(() => headers.goaway() !== undefined)).toBe(true);
    expect(headers.goaway()).toMatchObject({ code: 0x1 });
    await headers.closed;
    expect(headers.frames.some((f) => f.type === 1)).toBe(false); // the call never ran
    // The same frame depending on stream 0 is an ordinary request.
    const fine = await RawPeer.open(port);
    const ok = Buffer.concat([Buffer.from([2, 0, 0, 0, 0, 15]), requestHeaders(), Buffer.alloc(2)]);
    fine.send(rawFrame(1, 0x4 | 0x8 | 0x20, 1, ok));
    fine.send(rawFrame(0, 0x1, 1, PLAIN));
    expect(await fine.until(() => fine.frames.some((f) => f.type === 1 && f.id === 1))).toBe(true);
    expect(fine.goaway()).toBeUndefined();
    fine.socket.destroy();
  });
});

describe('the lean server’s connection limit', () => {
  it('answers one connection over maxConnections with GOAWAY ENHANCE_YOUR_CALM and takes new ones as others close', async () => {
    let refused = 0;
    const server = new LeanGrpcServer({
      maxReceiveMessageBytes: MAX_RECEIVE,
      maxSendMessageBytes: MAX_SEND,
      maxConnections: 2,
      onConnectionRefused: () => refused++,
    });
    addServices(server);
    const port = await server.listen({ host: '127.0.0.1', port: 0 });
    try {
      const call = async (peer: RawPeer) => {
        peer.send(rawFrame(1, 0x4, 1, requestHeaders()));
        peer.send(rawFrame(0, 0x1, 1, PLAIN));
        return peer.until(() => peer.frames.some((f) => f.type === 1 && f.id === 1 && (f.flags & 0x1) !== 0));
      };
      const first = await RawPeer.open(port);
      const second = await RawPeer.open(port);
      expect(await call(first)).toBe(true);
      const third = await RawPeer.open(port);
      third.send(rawFrame(1, 0x4, 1, requestHeaders()));
      expect(await third.until(() => third.goaway() !== undefined)).toBe(true);
      await third.closed;
      const goaway = third.frames.find((f) => f.type === 7);
      expect(goaway?.payload.readUInt32BE(0)).toBe(0); // no stream was taken
      expect(goaway?.payload.readUInt32BE(4)).toBe(0xb); // ENHANCE_YOUR_CALM
      expect(goaway?.payload.subarray(8).toString()).toBe('too many connections');
      expect(third.frames.some((f) => f.type === 1)).toBe(false);
      expect(refused).toBe(1);
      // The two held connections still work, and a closed one frees its place.
      expect(await call(second)).toBe(true);
      first.socket.destroy();
      await first.closed;
      expect(await second.until(() => server.connections.size === 1)).toBe(true);
      const fourth = await RawPeer.open(port);
      expect(await call(fourth)).toBe(true);
      expect(fourth.goaway()).toBeUndefined();
      expect(refused).toBe(1);
      second.socket.destroy();
      fourth.socket.destroy();
    } finally {
      server.forceShutdown();
    }
  });
});

describe('the lean server’s idle timeout', () => {
  const IDLE_MS = 300;
  let server: LeanGrpcServer;
  let port: number;
  let idleClosed = 0;
  beforeAll(async () => {
    server = new LeanGrpcServer({
      maxReceiveMessageBytes: MAX_RECEIVE,
      maxSendMessageBytes: MAX_SEND,
      idleTimeoutMs: IDLE_MS,
      onConnectionIdle: () => idleClosed++,
    });
    addServices(server);
    port = await server.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => server.forceShutdown());

  const answered = (peer: RawPeer, id: number) =>
    peer.until(() => peer.frames.some((f) => f.type === 1 && f.id === id && (f.flags & 0x1) !== 0));

  it('sends GOAWAY NO_ERROR to a connection that holds no stream, PINGs or not, and closes it', async () => {
    const before = idleClosed;
    const peer = await RawPeer.open(port);
    const pings = setInterval(() => peer.send(rawFrame(6, 0, 0, Buffer.alloc(8))), IDLE_MS / 6);
    try {
      expect(await peer.until(() => peer.goaway() !== undefined, 30_000)).toBe(true);
    } finally {
      clearInterval(pings);
    }
    expect(peer.goaway()).toEqual({ lastStreamId: 0, code: 0 });
    await peer.closed;
    expect(idleClosed).toBe(before + 1);
  });

  it('closes a connection no sooner than the timeout after its last call was answered', async () => {
    const peer = await RawPeer.open(port);
    // Calls a quarter of the timeout apart, for twice the timeout: each one restarts the count.
    const ids = [1, 3, 5, 7, 9, 11, 13, 15];
    for (const id of ids) {
      peer.send(rawFrame(1, 0x4, id, requestHeaders()));
      peer.send(rawFrame(0, 0x1, id, PLAIN));
      expect(await answered(peer, id)).toBe(true);
      expect(peer.goaway()).toBeUndefined();
      await new Promise((r) => setTimeout(r, IDLE_MS / 4));
    }
    expect(await peer.until(() => peer.goaway() !== undefined, 30_000)).toBe(true);
    expect(peer.goaway()).toEqual({ lastStreamId: 15, code: 0 });
    const at = (pred: (f: Frame) => boolean) => peer.frames.find(pred)!.at;
    const lastAnswer = at((f) => f.type === 1 && f.id === 15 && (f.flags & 0x1) !== 0);
    const goaway = at((f) => f.type === 7);
    // Never early: the server counts from when the last stream ended, and a call resets the count.
    // Half of the timeout is slack for when this side read the two frames.
    expect(goaway - lastAnswer).toBeGreaterThanOrEqual(IDLE_MS / 2);
    await peer.closed;
  });

  it('keeps a connection whose stream stays open, and lets it go once that stream ends', async () => {
    const peer = await RawPeer.open(port);
    const body = Buffer.concat([Buffer.from([0, 0, 0, 0, 9, 0x12, 7]), Buffer.from('forever')]);
    peer.send(rawFrame(1, 0x4, 1, requestHeaders('/countersign.v1.Signer/WatchActivity')));
    peer.send(rawFrame(0, 0x1, 1, body));
    expect(await peer.until(() => peer.frames.filter((f) => f.type === 0 && f.id === 1).length >= 5)).toBe(
      true,
    );
    await new Promise((r) => setTimeout(r, IDLE_MS * 3));
    expect(peer.goaway()).toBeUndefined();
    peer.send(rawFrame(3, 0, 1, Buffer.from([0, 0, 0, 8]))); // RST_STREAM CANCEL
    expect(await peer.until(() => peer.goaway() !== undefined, 30_000)).toBe(true);
    expect(peer.goaway()).toEqual({ lastStreamId: 1, code: 0 });
    await peer.closed;
  });
});

describe('the lean server’s call admission', () => {
  let server: LeanGrpcServer;
  let port: number;
  const asked: string[] = [];
  beforeAll(async () => {
    server = new LeanGrpcServer({
      maxReceiveMessageBytes: MAX_RECEIVE,
      maxSendMessageBytes: MAX_SEND,
      admitCall: (call) => {
        asked.push(call.path);
        if (call.metadata.get('authorization')[0] === 'Bearer good') return undefined;
        const md = new grpc.Metadata();
        md.set('x-refused', 'at the headers');
        return { code: grpc.status.UNAUTHENTICATED, details: 'who are you', metadata: md };
      },
    });
    addServices(server);
    port = await server.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => server.forceShutdown());

  /** A GetActivity call over node:http2: its trailers, or what ended it otherwise. */
  function post(session: http2.ClientHttp2Session, token: string, encoding: string, body: Buffer) {
    return new Promise<{ status: string; message?: string; refused?: string; data: number }>((resolve) => {
      const req = session.request({
        ':method': 'POST',
        ':path': '/countersign.v1.Signer/GetActivity',
        'content-type': 'application/grpc',
        'grpc-encoding': encoding,
        authorization: `Bearer ${token}`,
        te: 'trailers',
      });
      let data = 0;
      const out = (h: http2.IncomingHttpHeaders) => ({
        status: String(h['grpc-status']),
        message: decodeURIComponent(String(h['grpc-message'] ?? '')),
        ...(h['x-refused'] === undefined ? {} : { refused: String(h['x-refused']) }),
        data,
      });
      req.on('response', (h) => {
        if (h['grpc-status'] !== undefined) resolve(out(h)); // trailers-only
      });
      req.on('data', (c: Buffer) => (data += c.length));
      req.on('trailers', (t) => resolve(out(t)));
      req.on('error', () => {});
      req.on('close', () => resolve({ status: `closed (${req.rstCode})`, data }));
      req.end(body);
    });
  }

  /** A message flagged compressed whose bytes are not gzip (5 + 64 KiB). */
  const NOT_GZIP = Buffer.concat([Buffer.from([1, 0, 1, 0, 0]), Buffer.alloc(65_536, 0x5a)]);

  it('refuses a call with the hook’s status before reading its message, and reads an admitted one', async () => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', () => {});
    try {
      // Not decompressed when refused: the answer is the hook's, not the decompression failure.
      expect(await post(session, 'bad', 'gzip', NOT_GZIP)).toEqual({
        status: String(grpc.status.UNAUTHENTICATED),
        message: 'who are you',
        refused: 'at the headers',
        data: 0,
      });
      // Nor measured against the limit: a message over 4 MiB, refused all the same.
      const huge = Buffer.alloc(5 + MAX_RECEIVE + 1);
      huge.writeUInt32BE(MAX_RECEIVE + 1, 1);
      expect((await post(session, 'bad', 'identity', huge)).status).toBe(String(grpc.status.UNAUTHENTICATED));
      // The same bytes from an admitted caller are read, and fail as they should.
      const admitted = await post(session, 'good', 'gzip', NOT_GZIP);
      expect(admitted).toMatchObject({
        status: String(grpc.status.INTERNAL),
        message: 'Failed to decompress message',
      });
      expect((await post(session, 'good', 'identity', huge)).status).toBe(
        String(grpc.status.RESOURCE_EXHAUSTED),
      );
      // The connection outlives the refusals, and an admitted call is answered.
      const ok = await post(session, 'good', 'identity', PLAIN);
      expect(ok.status).toBe('0');
      expect(ok.data).toBeGreaterThan(0);
      expect(asked.every((p) => p === '/countersign.v1.Signer/GetActivity')).toBe(true);
      expect(asked).toHaveLength(5);
    } finally {
      session.close();
    }
  });
});

describe('the lean server against mangled frame sequences', () => {
  it('meets 600 connections of mutated frames with no fault of its own, and answers a real call after', async () => {
    const faults: unknown[] = [];
    const server = new LeanGrpcServer({
      maxReceiveMessageBytes: MAX_RECEIVE,
      maxSendMessageBytes: MAX_SEND,
      maxConcurrentStreams: 8,
      prefaceTimeoutMs: 200,
      onError: (err) => faults.push(err),
    });
    addServices(server);
    const port = await server.listen({ host: '127.0.0.1', port: 0 });
    // xorshift32, seeded: a failure names the connection that found it, and reruns the same.
    let seed = 0x2545f491;
    const rand = (n: number) => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => rand(256)));
    const u32 = (v: number) => {
      const b = Buffer.alloc(4);
      b.writeUInt32BE(v >>> 0);
      return b;
    };
    const ids = [0, 1, 3, 5, 7, 2, 0x7fffffff];
    const frameOf = (id: number): Buffer => {
      const block = requestHeaders(rand(4) === 0 ? '/grpc.health.v1.Health/Check' : undefined, [
        ['grpc-encoding', ['gzip', 'deflate', 'identity', 'br'][rand(4)]!],
        ['grpc-timeout', ['1S', '10m', 'x', '99999999H'][rand(4)]!],
      ]);
      switch (rand(14)) {
        case 0:
          return rawFrame(1, 0x4 | rand(2), id, block); // HEADERS, END_STREAM or not
        case 1:
          return rawFrame(1, 0x0, id, block.subarray(0, rand(block.length))); // awaits CONTINUATION
        case 2:
          return rawFrame(9, 0x4, id, block.subarray(rand(block.length))); // CONTINUATION
        case 3:
          return rawFrame(
            1,
            0x4 | 0x8 | 0x20,
            id,
            Buffer.concat([
              Buffer.from([rand(8)]),
              u32(rand(9)),
              Buffer.from([rand(256)]),
              block,
              Buffer.alloc(0),
            ]),
          ); // padded, with priority
        case 4:
          return rawFrame(
            0,
            rand(2),
            id,
            rand(2) === 0 ? PLAIN : Buffer.concat([Buffer.from([rand(2)]), u32(rand(64)), bytes(rand(64))]),
          ); // DATA
        case 5:
          return rawFrame(0, 0x8 | rand(2), id, Buffer.concat([Buffer.from([rand(20)]), bytes(rand(16))])); // padded DATA
        case 6:
          return rawFrame(4, rand(2), id, bytes(6 * rand(4) + (rand(5) === 0 ? 1 : 0))); // SETTINGS
        case 7:
          return rawFrame(6, rand(2), id, bytes(rand(5) === 0 ? 7 : 8)); // PING
        case 8:
          return rawFrame(8, 0, id, rand(3) === 0 ? bytes(3) : u32(rand(3) === 0 ? 0 : rand(1 << 31))); // WINDOW_UPDATE
        case 9:
          return rawFrame(3, 0, id, u32(rand(14))); // RST_STREAM
        case 10:
          return rawFrame(7, 0, id, Buffer.concat([u32(rand(9)), u32(rand(14)), bytes(rand(8))])); // GOAWAY
        case 11:
          return rawFrame(2, 0, id, bytes(rand(3) === 0 ? 4 : 5)); // PRIORITY
        case 12:
          return rawFrame(rand(256), rand(256), id, bytes(rand(32))); // any type
        default:
          return bytes(rand(40)); // not a frame at all
      }
    };
    const attempt = async (c: number) => {
      const parts = [PREFACE, rawFrame(4, 0, 0)];
      for (let i = 0, n = 1 + rand(10); i < n; i++) parts.push(frameOf(ids[rand(ids.length)]!));
      let wire = Buffer.concat(parts);
      const m = rand(5);
      if (m === 0)
        for (let k = 0, n = 1 + rand(6); k < n; k++)
          wire[PREFACE.length + rand(wire.length - PREFACE.length)] = rand(256);
      else if (m === 1) wire = wire.subarray(0, PREFACE.length + rand(wire.length - PREFACE.length + 1));
      else if (m === 2) {
        const at = PREFACE.length + rand(wire.length - PREFACE.length);
        wire = Buffer.concat([wire.subarray(0, at), bytes(1 + rand(12)), wire.subarray(at)]);
      }
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => {});
      await new Promise((r) => socket.once('connect', r));
      // Sent in one write or in pieces, so frames split across reads too.
      if (rand(2) === 0) socket.write(wire);
      else
        for (let at = 0; at < wire.length; at += 1 + rand(50))
          socket.write(wire.subarray(at, at + 1 + rand(50)));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 40);
        socket.once('close', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      socket.destroy();
      if (faults.length > 0) throw new Error(`connection ${c} found a fault: ${String(faults[0])}`);
    };
    try {
      for (let c = 0; c < 600; c += 30)
        await Promise.all(Array.from({ length: 30 }, (_, k) => attempt(c + k)));
      expect(faults).toEqual([]);
      const client = new Signer(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
      const answer = await unary(client, 'after the storm');
      client.close();
      expect(answer.value).toMatchObject({ activityId: 'after the storm' });
    } finally {
      server.forceShutdown();
    }
  });
});
