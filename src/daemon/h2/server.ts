/**
 * A gRPC server on HTTP/2 framed here, on plain `net` and `tls` sockets (RFC 9113, gRPC's
 * PROTOCOL-HTTP2). It serves the same service definitions and handlers as `@grpc/grpc-js`'s
 * `Server` (`addService` with unary, server-streaming and bidirectional methods, the same call
 * objects as far as the daemon's, health's and reflection's handlers use them, the same statuses,
 * messages and trailers), for a fraction of node:http2's per-stream cost: a unary answer is one
 * socket write of three frames, response headers are encoded once, and nothing is allocated per
 * call beyond the messages themselves.
 *
 * What it enforces for an untrusted peer: the client preface within 10 s, frames of at most 16 KiB,
 * header blocks of at most 64 KiB and header lists of `maxHeaderListSize` (decoded without
 * materializing past the limit), flow control both ways, `maxConcurrentStreams`, message sizes, and
 * a bounded write buffer (a peer that does not read is cut off).
 */
import { EventEmitter } from 'node:events';
import * as net from 'node:net';
import * as tls from 'node:tls';
import * as zlib from 'node:zlib';
import type * as grpc from '@grpc/grpc-js';
import {
  CONTINUATION,
  DATA,
  FLAG_ACK,
  FLAG_END_HEADERS,
  FLAG_END_STREAM,
  FLAG_PADDED,
  FLAG_PRIORITY,
  GOAWAY,
  HEADERS,
  MAX_WINDOW,
  PING,
  PREFACE,
  PRIORITY,
  PUSH_PROMISE,
  RST_STREAM,
  SETTINGS,
  WINDOW_UPDATE,
  frame,
  frameHeader,
} from './frames.js';
import { HpackDecoder, HpackError, encodeHeaders, encodeTableSizeUpdate } from './hpack.js';

// Error codes (§7).
const NO_ERROR = 0x0;
const PROTOCOL_ERROR = 0x1;
const INTERNAL_ERROR = 0x2;
const FLOW_CONTROL_ERROR = 0x3;
const STREAM_CLOSED = 0x5;
const FRAME_SIZE_ERROR = 0x6;
const REFUSED_STREAM = 0x7;
const COMPRESSION_ERROR = 0x9;
const ENHANCE_YOUR_CALM = 0xb;

/** The largest frame payload we accept (we never raise SETTINGS_MAX_FRAME_SIZE). */
const MAX_FRAME = 16_384;
const MAX_HEADER_BLOCK = 64 * 1024;
/** Our receive windows: per stream (advertised in SETTINGS) and for the connection. */
const STREAM_WINDOW = 1 << 20;
const CONNECTION_WINDOW = 16 << 20;
const MAX_HELD = 32 << 20;
const PREFACE_TIMEOUT_MS = 10_000;
/** Above this much unsent output the connection stops reading; above the hard limit it is cut. */
const WRITE_HIGH_WATER = 1 << 20;
const WRITE_HARD_LIMIT = 64 << 20;

const enum Status {
  OK = 0,
  UNKNOWN = 2,
  DEADLINE_EXCEEDED = 4,
  RESOURCE_EXHAUSTED = 8,
  UNIMPLEMENTED = 12,
  INTERNAL = 13,
}

export interface StatusObject {
  code: number;
  details: string;
  metadata?: grpc.Metadata | null | undefined;
}

/** The request metadata as handlers read it (grpc-js's `Metadata.get`). */
export class RequestMetadata {
  readonly #map = new Map<string, (string | Buffer)[]>();
  add(key: string, value: string | Buffer): void {
    const list = this.#map.get(key);
    if (list === undefined) this.#map.set(key, [value]);
    else list.push(value);
  }
  get(key: string): (string | Buffer)[] {
    return this.#map.get(key.toLowerCase()) ?? [];
  }
}

type HandlerType = 'unary' | 'serverStream' | 'clientStream' | 'bidi';
interface Handler {
  readonly path: string;
  readonly type: HandlerType;
  readonly func: (...args: never[]) => unknown;
  readonly deserialize: (b: Buffer) => unknown;
  readonly serialize: (v: unknown) => Buffer;
}

export interface LeanServerOptions {
  readonly maxReceiveMessageBytes: number;
  readonly maxSendMessageBytes: number;
  /** SETTINGS_MAX_CONCURRENT_STREAMS; a stream past it is refused (REFUSED_STREAM). */
  readonly maxConcurrentStreams?: number;
  /** SETTINGS_MAX_HEADER_LIST_SIZE; a larger request's metadata is answered RESOURCE_EXHAUSTED. */
  readonly maxHeaderListSize?: number;
  /**
   * Request bytes one connection's streams may hold (messages being read or waiting for their
   * stream's end) before the connection window stops being credited (default 32 MiB).
   */
  readonly maxHeldRequestBytes?: number;
  /** Told of a fault of this server's own (the connection it hit is closed, the process goes on). */
  readonly onError?: (err: unknown) => void;
  /** How long a new connection may take to send the client preface (default 10 s). */
  readonly prefaceTimeoutMs?: number;
  /**
   * Connections open at once (default: no limit). One more is sent SETTINGS and GOAWAY
   * (`ENHANCE_YOUR_CALM`, "too many connections") and closed before any of its frames is read.
   */
  readonly maxConnections?: number;
  /** Told of each connection refused for `maxConnections`. */
  readonly onConnectionRefused?: () => void;
  /**
   * How long a connection may hold no open stream before it is sent GOAWAY (NO_ERROR) and closed
   * (default: never). PINGs and SETTINGS are not use. A sweep checks, so a connection goes at least
   * this long after its last stream ended, and at most a half of it (two seconds at most) later.
   */
  readonly idleTimeoutMs?: number;
  /** Told of each connection closed for `idleTimeoutMs`. */
  readonly onConnectionIdle?: () => void;
  /**
   * Asked as soon as a call's headers are in, before any of its message is read: an error (read
   * as a handler's error is) refuses the call with its status there and then, and the message the
   * peer goes on sending is dropped unread, never decompressed or decoded. Undefined admits it.
   */
  readonly admitCall?: (call: AdmissionRequest) => unknown;
}

/** What `admitCall` sees of a call: its method's path, its metadata and the transport's peer. */
export interface AdmissionRequest {
  readonly path: string;
  readonly metadata: RequestMetadata;
  getAuthContext(): { transportSecurityType?: string; sslPeerCertificate?: tls.PeerCertificate };
}

/** Server TLS: the options of a secure context, replaced on reload. */
export interface LeanTls {
  readonly options: () => tls.SecureContextOptions & { requestCert: boolean };
  readonly onChange: (listener: () => void) => () => void;
}

const GRPC_TIMEOUT = /^(\d{1,8})\s*([HMSmun])$/;
const TIMEOUT_UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 };

type Field = readonly [name: string, value: string];
const RESPONSE_HEADERS: readonly Field[] = [
  [':status', '200'],
  ['content-type', 'application/grpc+proto'],
  ['grpc-accept-encoding', 'identity,deflate,gzip'],
  ['grpc-encoding', 'identity'],
];
const OK_TRAILERS: readonly Field[] = [
  ['grpc-status', '0'],
  ['grpc-message', 'OK'],
];
/**
 * The fields every answer repeats. Each enters the peer's HPACK dynamic table the first time it is
 * sent (a literal with incremental indexing) and is a one-byte index after that, so the client
 * decodes no strings for them. Nothing else is ever indexed, so the entries (282 octets) are never
 * evicted while the peer's table holds at least that much.
 */
const INDEXED_FIELDS = new Set(
  [...RESPONSE_HEADERS.slice(1), ...OK_TRAILERS].map(([n, v]) => `${n}\u0000${v}`),
);
const INDEXED_BYTES = [...RESPONSE_HEADERS.slice(1), ...OK_TRAILERS].reduce(
  (n, [k, v]) => n + k.length + v.length + 32,
  0,
);

/** Our encoder's view of one connection's peer decoder table (RFC 7541 §2.3.2). */
class ResponseFields {
  readonly #ordinal = new Map<string, number>();
  #count = 0;
  #enabled = true;
  /** The peer decoder's table limit as last signalled (4096 until its SETTINGS lower it). */
  #max = 4096;
  /** A table size update owed at the start of the next block (§4.2): the peer lowered its limit. */
  #pending: number | null = null;
  #headers: Buffer | undefined;
  #ok: Buffer | undefined;

  /**
   * SETTINGS_HEADER_TABLE_SIZE from the peer. A lower limit is acknowledged with a size update in
   * the next block (a decoder such as nghttp2 requires it); below what we index, the update is to 0
   * and indexing stops for good. A higher one changes nothing: we keep using less.
   */
  peerTableSize(size: number): void {
    if (size >= this.#max) return;
    this.#max = size;
    this.#pending = size < INDEXED_BYTES ? 0 : size;
    this.#headers = this.#ok = undefined;
    if (size < INDEXED_BYTES) {
      this.#enabled = false;
      this.#ordinal.clear();
      this.#count = 0;
    }
  }

  headers(): Buffer {
    return this.#common('headers', RESPONSE_HEADERS);
  }

  okTrailers(): Buffer {
    return this.#common('ok', OK_TRAILERS);
  }

  /**
   * One of the two common blocks. Once every field is in the table they never change, so they are
   * encoded once, and reused until a size update is owed (it must lead the next block).
   */
  #common(which: 'headers' | 'ok', fields: readonly Field[]): Buffer {
    if (this.#pending === null && this.#count === INDEXED_FIELDS.size) {
      this.#headers ??= this.encode(RESPONSE_HEADERS);
      this.#ok ??= this.encode(OK_TRAILERS);
      return which === 'headers' ? this.#headers : this.#ok;
    }
    return this.encode(fields);
  }

  encode(fields: readonly Field[]): Buffer {
    const parts: Buffer[] = [];
    if (this.#pending !== null) {
      parts.push(encodeTableSizeUpdate(this.#pending));
      this.#pending = null;
    }
    let plain: Field[] = [];
    for (const field of fields) {
      const key = `${field[0]}\u0000${field[1]}`;
      const ordinal = this.#ordinal.get(key);
      const index = ordinal === undefined ? undefined : 62 + this.#count - 1 - ordinal;
      if (index === undefined && !(this.#enabled && INDEXED_FIELDS.has(key))) {
        plain.push(field);
        continue;
      }
      if (plain.length > 0) parts.push(encodeHeaders(plain));
      plain = [];
      if (index !== undefined)
        parts.push(Buffer.from([0x80 | index])); // §6.1, index < 127
      else {
        // §6.2.1 with a literal name (every such name and value is shorter than 127 octets).
        const [name, value] = field;
        parts.push(
          Buffer.from([0x40, name.length]),
          Buffer.from(name, 'latin1'),
          Buffer.from([value.length]),
          Buffer.from(value, 'latin1'),
        );
        this.#ordinal.set(key, this.#count++);
      }
    }
    if (plain.length > 0) parts.push(encodeHeaders(plain));
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  }
}

/** grpc-js's reading of a handler's error (`serverErrorToStatus`). */
function errorToStatus(error: unknown, trailer?: grpc.Metadata | null): StatusObject {
  const e = (error ?? {}) as { code?: unknown; details?: unknown; message?: unknown; metadata?: unknown };
  const status: StatusObject = {
    code: Status.UNKNOWN,
    details:
      typeof error === 'object' && error !== null && 'message' in error ? String(e.message) : 'Unknown Error',
    metadata: trailer ?? (e.metadata as grpc.Metadata | undefined) ?? null,
  };
  if (typeof e.code === 'number' && Number.isInteger(e.code)) {
    status.code = e.code;
    if (typeof e.details === 'string') status.details = e.details;
  }
  return status;
}

/** grpc-message: percent-encoded as grpc-js does; a lone surrogate (encodeURI throws) becomes U+FFFD. */
function grpcMessage(details: string): string {
  try {
    return encodeURI(details);
  } catch {
    return encodeURI(details.replace(/[\uD800-\uDFFF]/g, '\uFFFD'));
  }
}

function statusBlock(status: StatusObject, trailersOnly: boolean, enc: ResponseFields): Buffer {
  const fields: Field[] = trailersOnly
    ? [
        [':status', '200'],
        ['content-type', 'application/grpc+proto'],
      ]
    : [];
  fields.push(['grpc-status', String(status.code)], ['grpc-message', grpcMessage(status.details)]);
  if (status.metadata) {
    for (const [k, v] of Object.entries(status.metadata.toHttp2Headers())) {
      if (Array.isArray(v)) for (const one of v) fields.push([k, String(one)]);
      else if (v !== undefined) fields.push([k, String(v)]);
    }
  }
  return enc.encode(fields);
}

const EMPTY_METADATA = new RequestMetadata();

/** Calls `handler.func` the way grpc-js does for each method kind. */
abstract class ServerCall extends EventEmitter {
  cancelled = false;
  constructor(
    protected readonly stream: Stream,
    readonly metadata: RequestMetadata,
  ) {
    super();
  }
  getPeer(): string {
    return this.stream.conn.peer();
  }
  getDeadline(): number {
    return this.stream.deadline;
  }
  getPath(): string {
    return this.stream.handler.path;
  }
  getAuthContext(): { transportSecurityType?: string; sslPeerCertificate?: tls.PeerCertificate } {
    return this.stream.conn.authContext();
  }
  sendMetadata(md: grpc.Metadata): void {
    this.stream.sendHeaders(md);
  }
}

class UnaryCall extends ServerCall {
  constructor(
    stream: Stream,
    metadata: RequestMetadata,
    readonly request: unknown,
  ) {
    super(stream, metadata);
  }
}

/** A server-streaming or bidirectional call: write() messages, end() or emit('error') the status. */
class StreamingCall extends ServerCall {
  request: unknown;
  #pending: StatusObject | undefined;
  constructor(stream: Stream, metadata: RequestMetadata, request?: unknown) {
    super(stream, metadata);
    this.request = request;
    this.on('error', (err: unknown) => {
      this.#pending = errorToStatus(err);
      this.end();
    });
  }
  write(message: unknown, cb?: () => void): boolean {
    const ok = this.stream.sendMessage(message);
    if (cb) process.nextTick(cb);
    return ok;
  }
  end(trailer?: grpc.Metadata): void {
    const status = this.#pending ?? { code: Status.OK, details: 'OK' };
    if (trailer !== undefined && this.#pending === undefined) status.metadata = trailer;
    this.stream.sendStatus(status);
  }
}

/** One HTTP/2 stream carrying one gRPC call. */
class Stream {
  sendWindow: number;
  /** Bytes received and not yet given back in a WINDOW_UPDATE. */
  recvUnacked = 0;
  remoteEnded = false;
  localEnded = false;
  headersSent = false;
  deadline = Infinity;
  timer: NodeJS.Timeout | undefined;
  /** Frames held back by flow control (DATA payloads), then the trailers block. */
  queue: Buffer[] | null = null;
  /** Encoded only when sent: HPACK blocks must be encoded in wire order. */
  queuedTrailers: (() => Buffer) | null = null;
  call: ServerCall | undefined;
  /** The gRPC message being read: 5-byte prefix and body. */
  #chunks: Buffer[] = [];
  #chunkBytes = 0;
  /** Request bytes this stream holds (a message being read, a message waiting for the end). */
  held = 0;
  messages: Buffer[] = [];
  encoding = 'identity';
  metadata = EMPTY_METADATA;

  constructor(
    readonly conn: Connection,
    readonly id: number,
    readonly handler: Handler,
  ) {
    this.sendWindow = conn.peerInitialWindow;
  }

  /** Splits DATA payloads into gRPC messages; returns false when the stream was answered. */
  onData(data: Buffer): boolean {
    // Chunks are joined once a message is complete (never per frame: a 4 MiB message arrives in
    // 256 frames).
    this.#chunks.push(data);
    this.#chunkBytes += data.length;
    this.hold(data.length);
    const max = this.conn.server.options.maxReceiveMessageBytes;
    while (this.#chunkBytes >= 5) {
      let first = this.#chunks[0]!;
      if (first.length < 5) first = this.#join();
      const len = first.readUInt32BE(1);
      if (len > max) {
        this.sendStatus({
          code: Status.RESOURCE_EXHAUSTED,
          details: `Received message larger than max (${len} vs ${max})`,
        });
        return false;
      }
      if (this.#chunkBytes < 5 + len) break;
      const all = first.length >= 5 + len ? first : this.#join();
      const framed = all.subarray(0, 5 + len);
      const rest = all.subarray(5 + len);
      this.#chunks[0] = rest;
      if (this.#chunks.length === 1 && rest.length === 0) this.#chunks = [];
      else if (rest.length === 0) this.#chunks.shift();
      this.#chunkBytes -= 5 + len;
      this.hold(-(5 + len));
      const message = this.decode(framed);
      if (message === undefined) return false;
      if (!this.onMessage(message)) return false;
    }
    // A remainder pinning a socket read four times its size is copied out, so what a stream holds
    // (counted against the connection's limit) is what it costs.
    const last = this.#chunks[this.#chunks.length - 1];
    if (last !== undefined && last.buffer.byteLength > 4 * last.length)
      this.#chunks[this.#chunks.length - 1] = Buffer.from(last);
    return true;
  }

  #join(): Buffer {
    const all = Buffer.concat(this.#chunks);
    this.#chunks = [all];
    return all;
  }

  /** Counts request bytes held, here and on the connection (which stops crediting its window). */
  hold(delta: number): void {
    this.held += delta;
    this.conn.held += delta;
  }

  /** Gives back what the stream held when it ends. */
  release(): void {
    if (this.held === 0) return;
    this.conn.held -= this.held;
    this.held = 0;
    this.#chunks = [];
    this.#chunkBytes = 0;
    this.messages = [];
    if (this.conn.withheld) this.conn.creditWindow();
  }

  /** The message's body, decompressed when its flag says so; undefined after answering. */
  decode(framed: Buffer): Buffer | undefined {
    const body = framed.subarray(5);
    if (framed[0] === 0 || this.encoding === 'identity') return body;
    const max = this.conn.server.options.maxReceiveMessageBytes;
    if (this.encoding !== 'gzip' && this.encoding !== 'deflate') {
      this.sendStatus({
        code: Status.UNIMPLEMENTED,
        details: `Received message compressed with unsupported encoding "${this.encoding}"`,
      });
      return undefined;
    }
    try {
      return this.encoding === 'gzip'
        ? zlib.gunzipSync(body, { maxOutputLength: max })
        : zlib.inflateSync(body, { maxOutputLength: max });
    } catch (e) {
      this.sendStatus(
        (e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE'
          ? {
              code: Status.RESOURCE_EXHAUSTED,
              details: `Received message that decompresses to a size larger than ${max}`,
            }
          : { code: Status.INTERNAL, details: 'Failed to decompress message' },
      );
      return undefined;
    }
  }

  onMessage(body: Buffer): boolean {
    const type = this.handler.type;
    if ((type === 'unary' || type === 'serverStream') && this.messages.length > 0) {
      this.sendStatus({
        code: Status.UNIMPLEMENTED,
        details: `Received a second request message for server streaming method ${this.handler.path}`,
      });
      return false;
    }
    if (type === 'bidi') {
      const message = this.deserialize(body);
      if (message === undefined) return false;
      this.call?.emit('data', message);
      return !this.localEnded;
    }
    this.messages.push(body);
    this.hold(body.length);
    return true;
  }

  deserialize(body: Buffer): unknown {
    try {
      return this.handler.deserialize(body);
    } catch {
      this.sendStatus({ code: Status.INTERNAL, details: 'Error deserializing request' });
      return undefined;
    }
  }

  /** The request is complete: run a unary or server-streaming handler, or end a bidi's input. */
  onEnd(): void {
    const metadata = this.metadata;
    if (this.localEnded) return;
    if (this.#chunkBytes > 0) {
      this.sendStatus({ code: Status.INTERNAL, details: 'Incomplete message at the end of the stream' });
      return;
    }
    const { type, path, func } = this.handler;
    if (type === 'bidi') {
      this.call?.emit('end');
      return;
    }
    const body = this.messages[0];
    if (body === undefined) {
      this.sendStatus({
        code: Status.UNIMPLEMENTED,
        details: `Received no request message for server streaming method ${path}`,
      });
      return;
    }
    const request = this.deserialize(body);
    this.release();
    if (request === undefined) return;
    try {
      if (type === 'unary') {
        const call = new UnaryCall(this, metadata, request);
        this.call = call;
        (func as unknown as grpc.handleUnaryCall<unknown, unknown>)(
          call as unknown as grpc.ServerUnaryCall<unknown, unknown>,
          (err, value, trailer) => {
            if (err) this.sendStatus(errorToStatus(err, trailer));
            else this.sendUnary(value, trailer);
          },
        );
      } else {
        const call = new StreamingCall(this, metadata, request);
        this.call = call;
        (func as unknown as (c: StreamingCall) => void)(call);
      }
    } catch {
      this.sendStatus({ code: Status.UNKNOWN, details: 'Unknown error' });
    }
  }

  /** Starts a bidi call as its headers arrive (messages follow as 'data'). */
  startBidi(metadata: RequestMetadata): void {
    const call = new StreamingCall(this, metadata);
    this.call = call;
    try {
      (this.handler.func as unknown as (c: StreamingCall) => void)(call);
    } catch {
      this.sendStatus({ code: Status.UNKNOWN, details: 'Unknown error' });
    }
  }

  serialize(value: unknown): Buffer | undefined {
    let body: Buffer;
    try {
      body = this.handler.serialize(value);
    } catch {
      this.sendStatus({ code: Status.INTERNAL, details: 'Error serializing response' });
      return undefined;
    }
    const max = this.conn.server.options.maxSendMessageBytes;
    if (body.length > max) {
      this.sendStatus({
        code: Status.RESOURCE_EXHAUSTED,
        details: `Sent message larger than max (${body.length + 5} vs. ${max})`,
      });
      return undefined;
    }
    return body;
  }

  /** A unary answer: headers, the message and the OK trailers, in one write when the windows allow. */
  sendUnary(value: unknown, trailer?: grpc.Metadata | null): void {
    if (this.localEnded) return;
    const body = this.serialize(value);
    if (body === undefined) return;
    const conn = this.conn;
    const dataLen = 5 + body.length;
    // Blocks are encoded in the order they go on the wire: the HPACK table depends on it.
    const trailers = () =>
      trailer && trailer.getMap && Object.keys(trailer.getMap()).length > 0
        ? statusBlock({ code: Status.OK, details: 'OK', metadata: trailer }, false, conn.fields)
        : conn.fields.okTrailers();
    if (
      this.headersSent ||
      dataLen > conn.peerMaxFrame ||
      dataLen > this.sendWindow ||
      dataLen > conn.sendWindow ||
      this.queue !== null
    ) {
      this.sendHeaders();
      this.sendFramed(body);
      this.finish(trailers);
      return;
    }
    const headers = conn.fields.headers();
    const tail = trailers();
    if (headers.length > conn.peerMaxFrame || tail.length > conn.peerMaxFrame) {
      // Not the common case: the same frames, split as the peer's frame size requires.
      this.headersSent = true;
      conn.writeHeaderBlock(this.id, headers, false);
      this.sendFramed(body);
      this.finish(() => tail);
      return;
    }
    const trailersBlock = tail;
    this.headersSent = true;
    const h = headers.length;
    const t = trailersBlock.length;
    const out = Buffer.allocUnsafe(27 + h + dataLen + t);
    frameHeader(out, 0, h, HEADERS, FLAG_END_HEADERS, this.id);
    headers.copy(out, 9);
    let at = 9 + h;
    frameHeader(out, at, dataLen, DATA, 0, this.id);
    out[at + 9] = 0;
    out.writeUInt32BE(body.length, at + 10);
    body.copy(out, at + 14);
    at += 9 + dataLen;
    frameHeader(out, at, t, HEADERS, FLAG_END_HEADERS | FLAG_END_STREAM, this.id);
    trailersBlock.copy(out, at + 9);
    this.sendWindow -= dataLen;
    conn.sendWindow -= dataLen;
    conn.write(out);
    this.closeLocal();
  }

  sendHeaders(md?: grpc.Metadata, encoded?: Buffer): void {
    if (this.headersSent || this.localEnded) return;
    this.headersSent = true;
    const custom = md?.toHttp2Headers();
    const block =
      custom === undefined || Object.keys(custom).length === 0
        ? (encoded ?? this.conn.fields.headers())
        : this.conn.fields.encode([
            ...RESPONSE_HEADERS,
            ...Object.entries(custom).flatMap(([k, v]) =>
              (Array.isArray(v) ? v : [v]).map((one) => [k, String(one)] as const),
            ),
          ]);
    this.conn.writeHeaderBlock(this.id, block, false);
  }

  /** A streaming call's message; false once the stream's output is backed up. */
  sendMessage(value: unknown): boolean {
    if (this.localEnded) return false;
    const body = this.serialize(value);
    if (body === undefined) return false;
    this.sendHeaders();
    this.sendFramed(body);
    return this.queue === null;
  }

  sendFramed(body: Buffer): void {
    const framed = Buffer.allocUnsafe(5 + body.length);
    framed[0] = 0;
    framed.writeUInt32BE(body.length, 1);
    body.copy(framed, 5);
    if (this.queue !== null) this.queue.push(framed);
    else this.conn.sendData(this, framed);
  }

  /** Ends the call with its status: trailers after any data, or a trailers-only answer. */
  sendStatus(status: StatusObject): void {
    if (this.localEnded) return;
    if (!this.headersSent) {
      this.headersSent = true;
      this.conn.writeHeaderBlock(this.id, statusBlock(status, true, this.conn.fields), true);
      this.closeLocal();
      return;
    }
    this.finish(() => statusBlock(status, false, this.conn.fields));
  }

  finish(trailers: () => Buffer): void {
    if (this.queue !== null) {
      this.queuedTrailers = trailers;
      this.localEnded = true;
      this.clearTimer();
      return;
    }
    this.conn.writeHeaderBlock(this.id, trailers(), true);
    this.closeLocal();
  }

  /** Our side is done: the stream closes, or is reset when the client is still sending. */
  closeLocal(): void {
    this.localEnded = true;
    this.clearTimer();
    this.release();
    if (!this.remoteEnded) this.conn.resetStream(this.id, NO_ERROR);
    this.conn.closeStream(this);
  }

  clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The deadline passed: DEADLINE_EXCEEDED now (output still held back is dropped). */
  expire(): void {
    this.timer = undefined;
    if (!this.localEnded || this.queuedTrailers !== null) {
      this.queue = null;
      this.queuedTrailers = null;
      this.conn.blocked.delete(this);
      this.localEnded = false;
      this.sendStatus({ code: Status.DEADLINE_EXCEEDED, details: 'Deadline exceeded' });
    }
    this.notifyCancelled();
  }

  /** The client reset the stream or the connection went away. */
  cancel(): void {
    this.clearTimer();
    this.release();
    this.queue = null;
    this.queuedTrailers = null;
    this.localEnded = true;
    this.notifyCancelled();
  }

  notifyCancelled(): void {
    const call = this.call;
    if (call !== undefined && !call.cancelled) {
      call.cancelled = true;
      process.nextTick(() => call.emit('cancelled', 'cancelled'));
    }
  }
}

/**
 * Whether the priority fields at `at` name stream `id` itself as its dependency, which RFC 9113
 * §5.3.1 forbids. Refused as a connection error, as nghttp2 (node:http2, grpc-js) refuses it.
 */
function dependsOnItself(payload: Buffer, at: number, id: number): boolean {
  return (payload.readUInt32BE(at) & 0x7fffffff) === id;
}

class Connection {
  readonly decoder: HpackDecoder;
  readonly fields = new ResponseFields();
  readonly streams = new Map<number, Stream>();
  buf: Buffer | null = null;
  prefaceDone = false;
  settingsSeen = false;
  lastStreamId = 0;
  sendWindow = 65_535;
  peerInitialWindow = 65_535;
  peerMaxFrame = 16_384;
  recvUnacked = 0;
  /** Request bytes the streams hold; above MAX_HELD the connection window is not credited. */
  held = 0;
  withheld = false;
  /** A header block spread over CONTINUATION frames. */
  hdrId = 0;
  hdrEndStream = false;
  hdrChunks: Buffer[] = [];
  hdrLength = 0;
  out: Buffer[] = [];
  outLength = 0;
  flushScheduled = false;
  blocked = new Set<Stream>();
  draining = false;
  dead = false;
  prefaceTimer: NodeJS.Timeout | undefined;
  /** When the idle sweep first saw this connection without streams, and its last stream id then. */
  idleSince: number | undefined;
  idleAtStreamId = 0;

  constructor(
    readonly server: LeanGrpcServer,
    readonly socket: net.Socket,
  ) {
    this.decoder = new HpackDecoder({ maxHeaderListSize: server.maxHeaderListSize });
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      try {
        this.onData(chunk);
      } catch (err) {
        server.options.onError?.(err);
        this.fail(INTERNAL_ERROR);
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => this.onClose());
    socket.on('drain', () => {
      if (!this.dead) socket.resume();
    });
    this.prefaceTimer = setTimeout(
      () => this.destroy(),
      server.options.prefaceTimeoutMs ?? PREFACE_TIMEOUT_MS,
    );
    this.prefaceTimer.unref();
    // Our SETTINGS, then the connection window raised from 64 KiB.
    const settings = Buffer.alloc(18);
    settings.writeUInt16BE(0x3, 0); // MAX_CONCURRENT_STREAMS
    settings.writeUInt32BE(server.maxConcurrentStreams, 2);
    settings.writeUInt16BE(0x4, 6); // INITIAL_WINDOW_SIZE
    settings.writeUInt32BE(STREAM_WINDOW, 8);
    settings.writeUInt16BE(0x6, 12); // MAX_HEADER_LIST_SIZE
    settings.writeUInt32BE(server.maxHeaderListSize, 14);
    this.write(frame(SETTINGS, 0, 0, settings));
    this.windowUpdate(0, CONNECTION_WINDOW - 65_535);
  }

  peer(): string {
    const s = this.socket;
    if (!s.remoteAddress) return 'unknown';
    return s.remotePort ? `${s.remoteAddress}:${s.remotePort}` : s.remoteAddress;
  }

  authContext(): { transportSecurityType?: string; sslPeerCertificate?: tls.PeerCertificate } {
    const s = this.socket;
    if (!(s instanceof tls.TLSSocket) || !s.authorized) return {};
    const cert = s.getPeerCertificate();
    return { transportSecurityType: 'ssl', ...(cert.raw ? { sslPeerCertificate: cert } : {}) };
  }

  onData(chunk: Buffer): void {
    if (this.dead) return;
    const b = this.buf === null ? chunk : Buffer.concat([this.buf, chunk]);
    let off = 0;
    if (!this.prefaceDone) {
      const n = Math.min(b.length, PREFACE.length);
      if (b.compare(PREFACE, 0, n, 0, n) !== 0) return this.destroy();
      if (b.length < PREFACE.length) {
        this.buf = b;
        return;
      }
      this.prefaceDone = true;
      clearTimeout(this.prefaceTimer);
      off = PREFACE.length;
    }
    while (b.length - off >= 9) {
      const len = (b[off]! << 16) | (b[off + 1]! << 8) | b[off + 2]!;
      if (len > MAX_FRAME) return this.fail(FRAME_SIZE_ERROR);
      if (b.length - off - 9 < len) break;
      const type = b[off + 3]!;
      const flags = b[off + 4]!;
      const id = b.readUInt32BE(off + 5) & 0x7fffffff;
      const payload = b.subarray(off + 9, off + 9 + len);
      off += 9 + len;
      this.onFrame(type, flags, id, payload);
      if (this.dead) return;
    }
    this.buf = off === b.length ? null : b.subarray(off);
    // Copy a small remainder out of a large chunk so the chunk can be freed.
    if (this.buf !== null && this.buf.length < 4096 && b.length > 65_536) this.buf = Buffer.from(this.buf);
  }

  onFrame(type: number, flags: number, id: number, payload: Buffer): void {
    if (!this.settingsSeen) {
      if (type !== SETTINGS || (flags & FLAG_ACK) !== 0) return this.fail(PROTOCOL_ERROR);
      this.settingsSeen = true;
    }
    if (this.hdrId !== 0 && (type !== CONTINUATION || id !== this.hdrId)) return this.fail(PROTOCOL_ERROR);
    switch (type) {
      case DATA:
        return this.onDataFrame(flags, id, payload);
      case HEADERS:
        return this.onHeaders(flags, id, payload);
      case CONTINUATION:
        return this.onContinuation(flags, id, payload);
      case PRIORITY:
        if (id === 0) return this.fail(PROTOCOL_ERROR);
        if (payload.length !== 5) return this.resetStream(id, FRAME_SIZE_ERROR);
        if (dependsOnItself(payload, 0, id)) return this.fail(PROTOCOL_ERROR);
        return;
      case RST_STREAM: {
        if (id === 0) return this.fail(PROTOCOL_ERROR);
        if (payload.length !== 4) return this.fail(FRAME_SIZE_ERROR);
        if (id > this.lastStreamId) return this.fail(PROTOCOL_ERROR);
        const stream = this.streams.get(id);
        if (stream !== undefined) {
          this.streams.delete(id);
          this.blocked.delete(stream);
          stream.cancel();
          this.maybeDrained();
        }
        return;
      }
      case SETTINGS:
        return this.onSettings(flags, id, payload);
      case PUSH_PROMISE:
        return this.fail(PROTOCOL_ERROR);
      case PING:
        if (id !== 0) return this.fail(PROTOCOL_ERROR);
        if (payload.length !== 8) return this.fail(FRAME_SIZE_ERROR);
        if ((flags & FLAG_ACK) === 0) this.write(frame(PING, FLAG_ACK, 0, payload));
        return;
      case GOAWAY:
        if (id !== 0) return this.fail(PROTOCOL_ERROR);
        this.draining = true;
        return this.maybeDrained();
      case WINDOW_UPDATE:
        return this.onWindowUpdate(id, payload);
      default:
        return; // unknown frame types are ignored (§5.5)
    }
  }

  /** Strips the padding (and the priority fields of HEADERS); undefined when malformed. */
  unpad(flags: number, payload: Buffer, priority: boolean): Buffer | undefined {
    let start = 0;
    let end = payload.length;
    if ((flags & FLAG_PADDED) !== 0) {
      if (payload.length < 1) return undefined;
      const pad = payload[0]!;
      start = 1;
      end -= pad;
    }
    if (priority && (flags & FLAG_PRIORITY) !== 0) start += 5;
    if (end < start) return undefined;
    return start === 0 && end === payload.length ? payload : payload.subarray(start, end);
  }

  onDataFrame(flags: number, id: number, payload: Buffer): void {
    if (id === 0) return this.fail(PROTOCOL_ERROR);
    if (id > this.lastStreamId) return this.fail(PROTOCOL_ERROR);
    // Every DATA frame counts against the connection window, whatever becomes of it.
    this.recvUnacked += payload.length;
    if (this.recvUnacked > CONNECTION_WINDOW) return this.fail(FLOW_CONTROL_ERROR);
    if (this.recvUnacked >= CONNECTION_WINDOW / 2) this.creditWindow();
    const data = this.unpad(flags, payload, false);
    if (data === undefined) return this.fail(PROTOCOL_ERROR);
    const stream = this.streams.get(id);
    if (stream === undefined) return; // a stream we already answered or reset
    if (stream.remoteEnded) {
      this.streams.delete(id);
      stream.cancel();
      return this.resetStream(id, STREAM_CLOSED);
    }
    stream.recvUnacked += payload.length;
    if (stream.recvUnacked > STREAM_WINDOW) {
      this.streams.delete(id);
      stream.cancel();
      return this.resetStream(id, FLOW_CONTROL_ERROR);
    }
    const end = (flags & FLAG_END_STREAM) !== 0;
    if (end) stream.remoteEnded = true;
    if (data.length > 0 && !stream.localEnded && !stream.onData(data)) return;
    if (end) return stream.onEnd();
    if (stream.recvUnacked >= STREAM_WINDOW / 2 && !stream.localEnded) {
      this.windowUpdate(id, stream.recvUnacked);
      stream.recvUnacked = 0;
    }
  }

  onHeaders(flags: number, id: number, payload: Buffer): void {
    if (id === 0 || (id & 1) === 0) return this.fail(PROTOCOL_ERROR);
    const block = this.unpad(flags, payload, true);
    if (block === undefined) return this.fail(PROTOCOL_ERROR);
    if ((flags & FLAG_PRIORITY) !== 0 && dependsOnItself(payload, (flags & FLAG_PADDED) !== 0 ? 1 : 0, id))
      return this.fail(PROTOCOL_ERROR);
    const endStream = (flags & FLAG_END_STREAM) !== 0;
    if ((flags & FLAG_END_HEADERS) !== 0) return this.onHeaderBlock(id, endStream, block);
    this.hdrId = id;
    this.hdrEndStream = endStream;
    this.hdrChunks = [block];
    this.hdrLength = block.length;
  }

  onContinuation(flags: number, id: number, payload: Buffer): void {
    if (this.hdrId === 0 || id !== this.hdrId) return this.fail(PROTOCOL_ERROR);
    this.hdrLength += payload.length;
    if (this.hdrLength > MAX_HEADER_BLOCK) return this.fail(ENHANCE_YOUR_CALM);
    this.hdrChunks.push(payload);
    if ((flags & FLAG_END_HEADERS) === 0) return;
    const block = Buffer.concat(this.hdrChunks, this.hdrLength);
    this.hdrId = 0;
    this.hdrChunks = [];
    this.onHeaderBlock(id, this.hdrEndStream, block);
  }

  onHeaderBlock(id: number, endStream: boolean, block: Buffer): void {
    let decoded: { headers: string[]; oversize: boolean };
    try {
      decoded = this.decoder.decode(block);
    } catch (e) {
      if (e instanceof HpackError) return this.fail(COMPRESSION_ERROR);
      throw e;
    }
    const existing = this.streams.get(id);
    if (existing !== undefined) {
      // Trailers from the client: they must end the stream.
      if (!endStream || existing.remoteEnded) {
        this.streams.delete(id);
        existing.cancel();
        return this.resetStream(id, PROTOCOL_ERROR);
      }
      existing.remoteEnded = true;
      return existing.onEnd();
    }
    if (id <= this.lastStreamId) return this.resetStream(id, STREAM_CLOSED);
    this.lastStreamId = id;
    if (this.draining || this.server.closing) return this.resetStream(id, REFUSED_STREAM);
    if (this.streams.size >= this.server.maxConcurrentStreams) return this.resetStream(id, REFUSED_STREAM);
    if (decoded.oversize) {
      return this.writeHeaderBlock(
        id,
        statusBlock(
          {
            code: Status.RESOURCE_EXHAUSTED,
            details: `request metadata larger than ${this.server.maxHeaderListSize} bytes`,
          },
          true,
          this.fields,
        ),
        true,
        !endStream,
      );
    }
    const h = decoded.headers;
    let path: string | undefined;
    let method: string | undefined;
    let contentType: string | undefined;
    let timeout: string | undefined;
    let encoding: string | undefined;
    const metadata = new RequestMetadata();
    for (let i = 0; i < h.length; i += 2) {
      const name = h[i]!;
      const value = h[i + 1]!;
      if (name.charCodeAt(0) === 58 /* ':' */) {
        if (name === ':path') path = value;
        else if (name === ':method') method = value;
        continue;
      }
      switch (name) {
        case 'content-type':
          contentType = value;
          continue;
        case 'grpc-timeout':
          timeout = value;
          continue;
        case 'grpc-encoding':
          encoding = value;
          continue;
        case 'te':
        case 'grpc-accept-encoding':
        case 'accept-encoding':
          continue;
      }
      if (name.endsWith('-bin')) {
        for (const part of value.split(',')) metadata.add(name, Buffer.from(part.trim(), 'base64'));
      } else metadata.add(name, value);
    }
    if (contentType === undefined || !contentType.startsWith('application/grpc') || method !== 'POST') {
      const status = contentType?.startsWith('application/grpc') ? '405' : '415';
      return this.writeHeaderBlock(id, encodeHeaders([[':status', status]]), true, !endStream);
    }
    const handler = path === undefined ? undefined : this.server.handlers.get(path);
    if (handler === undefined) {
      return this.writeHeaderBlock(
        id,
        statusBlock(
          { code: Status.UNIMPLEMENTED, details: `The server does not implement the method ${path}` },
          true,
          this.fields,
        ),
        true,
        !endStream,
      );
    }
    const stream = new Stream(this, id, handler);
    this.streams.set(id, stream);
    if (encoding !== undefined) stream.encoding = encoding;
    if (timeout !== undefined) {
      const m = GRPC_TIMEOUT.exec(timeout);
      if (m === null) {
        stream.remoteEnded = endStream;
        return stream.sendStatus({
          code: Status.INTERNAL,
          details: `Invalid grpc-timeout value "${timeout}"`,
        });
      }
      const ms = (Number(m[1]) * TIMEOUT_UNIT_MS[m[2]!]!) | 0;
      stream.deadline = Date.now() + ms;
      stream.timer = setTimeout(() => stream.expire(), ms);
    }
    if (handler.type === 'clientStream') {
      stream.remoteEnded = endStream;
      return stream.sendStatus({
        code: Status.UNIMPLEMENTED,
        details: `client-streaming method ${handler.path} is not served`,
      });
    }
    const admit = this.server.options.admitCall;
    if (admit !== undefined) {
      const refusal = admit({ path: handler.path, metadata, getAuthContext: () => this.authContext() });
      if (refusal !== undefined) {
        stream.remoteEnded = endStream;
        return stream.sendStatus(errorToStatus(refusal));
      }
    }
    stream.metadata = metadata;
    if (handler.type === 'bidi') stream.startBidi(metadata);
    if (endStream) {
      stream.remoteEnded = true;
      stream.onEnd();
    }
  }

  onSettings(flags: number, id: number, payload: Buffer): void {
    if (id !== 0) return this.fail(PROTOCOL_ERROR);
    if ((flags & FLAG_ACK) !== 0) {
      if (payload.length !== 0) return this.fail(FRAME_SIZE_ERROR);
      return;
    }
    if (payload.length % 6 !== 0) return this.fail(FRAME_SIZE_ERROR);
    for (let i = 0; i < payload.length; i += 6) {
      const key = payload.readUInt16BE(i);
      const value = payload.readUInt32BE(i + 2);
      if (key === 0x1) this.fields.peerTableSize(value); // HEADER_TABLE_SIZE
      if (key === 0x2 && value > 1) return this.fail(PROTOCOL_ERROR); // ENABLE_PUSH
      if (key === 0x4) {
        // INITIAL_WINDOW_SIZE: applies to every open stream as a delta (§6.9.2).
        if (value > MAX_WINDOW) return this.fail(FLOW_CONTROL_ERROR);
        const delta = value - this.peerInitialWindow;
        this.peerInitialWindow = value;
        for (const s of this.streams.values()) {
          s.sendWindow += delta;
          if (s.sendWindow > MAX_WINDOW) return this.fail(FLOW_CONTROL_ERROR);
        }
      } else if (key === 0x5) {
        if (value < 16_384 || value > 16_777_215) return this.fail(PROTOCOL_ERROR);
        this.peerMaxFrame = value;
      }
    }
    this.write(frame(SETTINGS, FLAG_ACK, 0));
    this.flushBlocked();
  }

  onWindowUpdate(id: number, payload: Buffer): void {
    if (payload.length !== 4) return this.fail(FRAME_SIZE_ERROR);
    const inc = payload.readUInt32BE(0) & 0x7fffffff;
    if (id === 0) {
      if (inc === 0) return this.fail(PROTOCOL_ERROR);
      this.sendWindow += inc;
      if (this.sendWindow > MAX_WINDOW) return this.fail(FLOW_CONTROL_ERROR);
      return this.flushBlocked();
    }
    if (id > this.lastStreamId) return this.fail(PROTOCOL_ERROR);
    const stream = this.streams.get(id);
    if (stream === undefined) return;
    if (inc === 0 || stream.sendWindow + inc > MAX_WINDOW) {
      this.streams.delete(id);
      stream.cancel();
      return this.resetStream(id, inc === 0 ? PROTOCOL_ERROR : FLOW_CONTROL_ERROR);
    }
    stream.sendWindow += inc;
    this.flushBlocked();
  }

  /** Sends as much of `framed` as the windows allow; the rest waits in the stream's queue. */
  sendData(stream: Stream, framed: Buffer): void {
    let off = 0;
    while (off < framed.length) {
      const room = Math.min(this.sendWindow, stream.sendWindow, this.peerMaxFrame);
      if (room <= 0) break;
      const n = Math.min(room, framed.length - off);
      this.write(frame(DATA, 0, stream.id, framed.subarray(off, off + n)));
      this.sendWindow -= n;
      stream.sendWindow -= n;
      off += n;
    }
    if (off < framed.length) {
      stream.queue = [framed.subarray(off)];
      this.blocked.add(stream);
    }
  }

  flushBlocked(): void {
    for (const stream of [...this.blocked]) {
      if (this.sendWindow <= 0) return;
      if (stream.sendWindow <= 0) continue;
      const queue = stream.queue ?? [];
      stream.queue = null;
      this.blocked.delete(stream);
      for (let i = 0; i < queue.length; i++) {
        this.sendData(stream, queue[i]!);
        const rest = stream.queue as Buffer[] | null;
        if (rest !== null) {
          rest.push(...queue.slice(i + 1));
          break;
        }
      }
      if (stream.queue === null && stream.queuedTrailers !== null) {
        const trailers = stream.queuedTrailers;
        stream.queuedTrailers = null;
        this.writeHeaderBlock(stream.id, trailers(), true);
        stream.closeLocal();
      }
    }
  }

  /** A header block as HEADERS (+ CONTINUATION) frames; with `reset`, then RST_STREAM NO_ERROR. */
  writeHeaderBlock(id: number, block: Buffer, endStream: boolean, reset = false): void {
    const max = this.peerMaxFrame;
    if (block.length <= max) {
      this.write(frame(HEADERS, FLAG_END_HEADERS | (endStream ? FLAG_END_STREAM : 0), id, block));
    } else {
      this.write(frame(HEADERS, endStream ? FLAG_END_STREAM : 0, id, block.subarray(0, max)));
      for (let off = max; off < block.length; off += max) {
        const last = off + max >= block.length;
        this.write(frame(CONTINUATION, last ? FLAG_END_HEADERS : 0, id, block.subarray(off, off + max)));
      }
    }
    if (reset) this.resetStream(id, NO_ERROR);
  }

  /**
   * Credits the connection window with what was received, unless the streams hold more than
   * MAX_HELD: then the peer stalls until calls end, so one connection's requests stay bounded.
   */
  creditWindow(): void {
    this.withheld = this.held > (this.server.options.maxHeldRequestBytes ?? MAX_HELD);
    if (this.recvUnacked === 0 || this.withheld || this.dead) return;
    this.windowUpdate(0, this.recvUnacked);
    this.recvUnacked = 0;
  }

  resetStream(id: number, code: number): void {
    const p = Buffer.allocUnsafe(4);
    p.writeUInt32BE(code, 0);
    this.write(frame(RST_STREAM, 0, id, p));
  }

  windowUpdate(id: number, inc: number): void {
    const p = Buffer.allocUnsafe(4);
    p.writeUInt32BE(inc, 0);
    this.write(frame(WINDOW_UPDATE, 0, id, p));
  }

  closeStream(stream: Stream): void {
    if (this.streams.get(stream.id) === stream) this.streams.delete(stream.id);
    this.blocked.delete(stream);
    this.maybeDrained();
  }

  write(b: Buffer): void {
    if (this.dead) return;
    this.out.push(b);
    this.outLength += b.length;
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  flush(): void {
    this.flushScheduled = false;
    if (this.dead || this.out.length === 0) return;
    const chunk = this.out.length === 1 ? this.out[0]! : Buffer.concat(this.out, this.outLength);
    this.out = [];
    this.outLength = 0;
    const s = this.socket;
    if (!s.write(chunk)) {
      if (s.writableLength > WRITE_HARD_LIMIT) return this.destroy();
      if (s.writableLength > WRITE_HIGH_WATER) s.pause();
    }
  }

  /** A connection error: GOAWAY with the code, then the socket closes. */
  fail(code: number): void {
    if (this.dead) return;
    const p = Buffer.allocUnsafe(8);
    p.writeUInt32BE(this.lastStreamId, 0);
    p.writeUInt32BE(code, 4);
    this.write(frame(GOAWAY, 0, 0, p));
    this.flush();
    this.dead = true;
    this.socket.end();
    setTimeout(() => this.socket.destroy(), 1000).unref();
    this.cancelAll();
  }

  /** Graceful shutdown: GOAWAY (no new streams), close once the open ones are answered. */
  goAway(): void {
    if (this.dead) return;
    const p = Buffer.allocUnsafe(8);
    p.writeUInt32BE(this.lastStreamId, 0);
    p.writeUInt32BE(NO_ERROR, 4);
    this.write(frame(GOAWAY, 0, 0, p));
    this.draining = true;
    this.maybeDrained();
  }

  maybeDrained(): void {
    if (this.draining && this.streams.size === 0 && !this.dead) {
      this.flush();
      this.dead = true;
      this.socket.end();
      setTimeout(() => this.socket.destroy(), 1000).unref();
    }
  }

  destroy(): void {
    this.dead = true;
    this.socket.destroy();
    this.cancelAll();
  }

  cancelAll(): void {
    for (const s of this.streams.values()) s.cancel();
    this.streams.clear();
    this.blocked.clear();
  }

  onClose(): void {
    clearTimeout(this.prefaceTimer);
    this.dead = true;
    this.cancelAll();
    this.server.connections.delete(this);
    this.server.onConnectionClosed();
  }
}

/**
 * Answers a connection over the limit as an HTTP/2 server that will take no streams: its SETTINGS,
 * then GOAWAY (last stream 0, ENHANCE_YOUR_CALM) saying why, and the end of the socket. What the
 * peer sends meanwhile is read and dropped; the socket is destroyed after a second at most.
 */
function refuseConnection(socket: net.Socket): void {
  const reason = Buffer.from('too many connections');
  const p = Buffer.alloc(8 + reason.length);
  p.writeUInt32BE(ENHANCE_YOUR_CALM, 4);
  reason.copy(p, 8);
  socket.on('error', () => {});
  socket.resume();
  socket.end(Buffer.concat([frame(SETTINGS, 0, 0), frame(GOAWAY, 0, 0, p)]));
  setTimeout(() => socket.destroy(), 1000).unref();
}

/** Where to listen: a host and port (0: ephemeral) or a Unix socket path. */
export type ListenTarget = { readonly path: string } | { readonly host: string; readonly port: number };

export class LeanGrpcServer {
  readonly handlers = new Map<string, Handler>();
  readonly connections = new Set<Connection>();
  readonly maxConcurrentStreams: number;
  readonly maxHeaderListSize: number;
  closing = false;
  #listeners: net.Server[] = [];
  #shutdownCallbacks: (() => void)[] = [];
  #unwatchTls: (() => void) | undefined;
  #idleSweep: NodeJS.Timeout | undefined;

  constructor(readonly options: LeanServerOptions) {
    this.maxConcurrentStreams = options.maxConcurrentStreams ?? 1024;
    this.maxHeaderListSize = options.maxHeaderListSize ?? 16 * 1024;
  }

  /** grpc-js's `addService`: the methods of a loaded service definition and their handlers. */
  addService(service: grpc.ServiceDefinition, implementation: grpc.UntypedServiceImplementation): void {
    for (const [name, attrs] of Object.entries(service)) {
      const func =
        implementation[name] ?? (attrs.originalName ? implementation[attrs.originalName] : undefined);
      if (func === undefined) continue;
      const type: HandlerType = attrs.requestStream
        ? attrs.responseStream
          ? 'bidi'
          : 'clientStream'
        : attrs.responseStream
          ? 'serverStream'
          : 'unary';
      this.handlers.set(attrs.path, {
        path: attrs.path,
        type,
        func: func as Handler['func'],
        deserialize: attrs.requestDeserialize as Handler['deserialize'],
        serialize: attrs.responseSerialize as Handler['serialize'],
      });
    }
  }

  /** Listens on a host and port or a Unix socket; resolves the bound port (0 for a socket). */
  async listen(where: ListenTarget, secure?: LeanTls): Promise<number> {
    const onSocket = (socket: net.Socket) => {
      if (this.closing) {
        socket.destroy();
        return;
      }
      if (socket instanceof tls.TLSSocket && socket.alpnProtocol !== 'h2') {
        socket.destroy();
        return;
      }
      if (this.connections.size >= (this.options.maxConnections ?? Infinity)) {
        refuseConnection(socket);
        this.options.onConnectionRefused?.();
        return;
      }
      this.connections.add(new Connection(this, socket));
    };
    const idleMs = this.options.idleTimeoutMs;
    if (idleMs !== undefined && this.#idleSweep === undefined) {
      this.#idleSweep = setInterval(() => this.#sweepIdle(idleMs), Math.min(1000, Math.max(10, idleMs / 4)));
      this.#idleSweep.unref();
    }
    const tlsServers: tls.Server[] = [];
    const contextOptions = () => {
      const opts = secure!.options();
      return { ...opts, rejectUnauthorized: opts.requestCert };
    };
    const create = (): net.Server => {
      if (secure === undefined) return net.createServer({ noDelay: true }, onSocket);
      const tlsServer = tls.createServer({ ...contextOptions(), ALPNProtocols: ['h2'] }, onSocket);
      tlsServer.on('tlsClientError', () => {});
      tlsServers.push(tlsServer);
      return tlsServer;
    };
    if (secure !== undefined)
      this.#unwatchTls = secure.onChange(() => {
        for (const t of tlsServers) t.setSecureContext(contextOptions());
      });
    const bind = (server: net.Server, at: () => void) =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.once('listening', () => {
          server.off('error', reject);
          resolve();
        });
        at();
      });
    if ('path' in where) {
      const server = create();
      await bind(server, () => server.listen(where.path));
      this.#listeners.push(server);
      return 0;
    }
    // `localhost` is both loopback addresses, as grpc-js binds it (IPv6 only where it exists).
    const hosts = where.host === 'localhost' ? ['127.0.0.1', '::1'] : [where.host];
    let port = where.port;
    for (const [i, host] of hosts.entries()) {
      const server = create();
      try {
        await bind(server, () => server.listen(port, host));
      } catch (err) {
        if (i === 0) throw err;
        continue;
      }
      this.#listeners.push(server);
      const address = server.address();
      if (typeof address === 'object' && address !== null) port = address.port;
    }
    return port;
  }

  /**
   * Sends GOAWAY to each connection that has had no stream for `idleMs`. One seen without streams
   * is marked with the time and its last stream id; it goes once it has stayed so for `idleMs`. A
   * stream seen open, or opened in between (a higher last stream id), clears the mark.
   */
  #sweepIdle(idleMs: number): void {
    const now = performance.now();
    for (const c of this.connections) {
      if (c.dead || c.draining || !c.prefaceDone) continue; // the preface has its own timer
      if (c.streams.size > 0) c.idleSince = undefined;
      else if (c.idleSince === undefined || c.lastStreamId !== c.idleAtStreamId) {
        c.idleSince = now;
        c.idleAtStreamId = c.lastStreamId;
      } else if (now - c.idleSince >= idleMs) {
        c.goAway();
        this.options.onConnectionIdle?.();
      }
    }
  }

  /** Stops listening, sends GOAWAY, and calls back once every connection has closed. */
  tryShutdown(callback: () => void): void {
    clearInterval(this.#idleSweep);
    this.closing = true;
    this.#unwatchTls?.();
    for (const l of this.#listeners) l.close();
    this.#shutdownCallbacks.push(callback);
    for (const c of this.connections) c.goAway();
    this.onConnectionClosed();
  }

  forceShutdown(): void {
    clearInterval(this.#idleSweep);
    this.closing = true;
    this.#unwatchTls?.();
    for (const l of this.#listeners) l.close();
    for (const c of this.connections) c.destroy();
    this.connections.clear();
    this.onConnectionClosed();
  }

  onConnectionClosed(): void {
    if (!this.closing || this.connections.size > 0) return;
    const callbacks = this.#shutdownCallbacks;
    this.#shutdownCallbacks = [];
    for (const cb of callbacks) cb();
  }
}
