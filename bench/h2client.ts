/**
 * The bench's gRPC client: unary calls over HTTP/2 framed by hand on a `net` socket (cleartext,
 * prior knowledge), for the load generator (load.ts).
 *
 * The load generator shares the machine's two cores with the server it measures, so what it spends
 * per call is taken from the server. node:http2's client spends most of its ~60–150 µs a call on
 * its per-stream objects and events (stop 35 measured the same of node:http2's server side); a
 * unary call needs none of them. Here a call is one pre-encoded HEADERS block and one DATA frame,
 * both written in the same turn of the loop as the other calls, and its answer is read from the
 * frames as they arrive: the response headers and trailers are HPACK-decoded (the daemon's own
 * decoder, src/daemon/h2/hpack.ts), and the call succeeds when the trailers carry grpc-status 0.
 *
 * It keeps to the protocol a server may rely on: the connection preface and SETTINGS (the server's
 * acknowledged), PINGs answered, flow control both ways (its own receive windows opened to the
 * maximum and topped up; the server's windows and SETTINGS_MAX_CONCURRENT_STREAMS respected, calls
 * waiting until they allow), frames split at the peer's SETTINGS_MAX_FRAME_SIZE, CONTINUATION,
 * RST_STREAM and GOAWAY. Not a general client: no TLS, no streaming calls, no compression.
 */
import { connect, type Socket } from 'node:net';
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
  RST_STREAM,
  SETTINGS,
  WINDOW_UPDATE,
  frame,
} from '../src/daemon/h2/frames.js';
import { encodeHeaders, HpackDecoder } from '../src/daemon/h2/hpack.js';

const DEFAULT_WINDOW = 65_535;

/** The outcome of one call: grpc-status as sent ('' when none came) and the response message. */
export type UnaryCallback = (status: string, message: Buffer | undefined) => void;

interface Call {
  readonly path: Buffer;
  /** The gRPC message with its 5-byte prefix. */
  readonly payload: Buffer;
  readonly done: UnaryCallback;
}

interface Stream {
  readonly done: UnaryCallback;
  /** The header block being received (HEADERS, then CONTINUATION until END_HEADERS). */
  block: Buffer[];
  blockEndsStream: boolean;
  status: string;
  data: Buffer[];
}

function windowUpdate(id: number, increment: number): Buffer {
  const p = Buffer.allocUnsafe(4);
  p.writeUInt32BE(increment, 0);
  return frame(WINDOW_UPDATE, 0, id, p);
}

export class H2GrpcClient {
  readonly #socket: Socket;
  readonly #authority: string;
  readonly #decoder = new HpackDecoder();
  /** Header blocks by path, encoded once (literals without indexing: no encoder state). */
  readonly #blocks = new Map<string, Buffer>();
  readonly #streams = new Map<number, Stream>();
  /** Calls waiting for a stream slot or send window, in order. */
  readonly #waiting: Call[] = [];
  #nextId = 1;
  #maxStreams = Number.POSITIVE_INFINITY;
  #maxFrame = 16_384;
  /** The server's initial stream window (SETTINGS_INITIAL_WINDOW_SIZE). */
  #streamWindow = DEFAULT_WINDOW;
  /** What we may still send on the connection (the server's connection window). */
  #sendWindow = DEFAULT_WINDOW;
  /** Bytes received since our connection window was last topped up. */
  #received = 0;
  /** Frames to write at the end of this turn (one socket write for all of them). */
  #out: Buffer[] = [];
  #flushQueued = false;
  #closed: Error | undefined;
  /** Whether the server's first SETTINGS came (its stream window is then known). */
  #settled = false;
  /** The buffered bytes of a frame not yet whole. */
  #pending: Buffer | undefined;

  private constructor(socket: Socket, authority: string) {
    this.#socket = socket;
    this.#authority = authority;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('error', (e) => this.#fail(e));
    socket.on('close', () => this.#fail(new Error('the connection closed')));
  }

  /** Connects to `authority` (host:port) and sends the preface and SETTINGS. */
  static connect(authority: string): Promise<H2GrpcClient> {
    const at = authority.lastIndexOf(':');
    const host = authority.slice(0, at).replace(/^\[|\]$/g, '');
    const port = Number(authority.slice(at + 1));
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port });
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        const client = new H2GrpcClient(socket, authority);
        const settings = Buffer.alloc(12);
        settings.writeUInt16BE(0x2, 0); // ENABLE_PUSH
        settings.writeUInt32BE(0, 2);
        settings.writeUInt16BE(0x4, 6); // INITIAL_WINDOW_SIZE
        settings.writeUInt32BE(MAX_WINDOW, 8);
        client.#write(PREFACE, frame(SETTINGS, 0, 0, settings));
        client.#write(windowUpdate(0, MAX_WINDOW - DEFAULT_WINDOW));
        resolve(client);
      });
    });
  }

  /** One unary call: `frame` is the request as a gRPC length-prefixed message. */
  unary(path: string, frame: Buffer, done: UnaryCallback): void {
    let block = this.#blocks.get(path);
    if (block === undefined) {
      block = encodeHeaders([
        [':method', 'POST'],
        [':scheme', 'http'],
        [':path', path],
        [':authority', this.#authority],
        ['content-type', 'application/grpc'],
        ['te', 'trailers'],
      ]);
      this.#blocks.set(path, block);
    }
    if (this.#closed !== undefined) {
      setImmediate(done, '', undefined); // as a failed stream would: never inside the caller
      return;
    }
    this.#waiting.push({ path: block, payload: frame, done });
    this.#start();
  }

  close(): void {
    this.#fail(new Error('closed by the client'));
    this.#socket.destroy();
  }

  /** Starts the waiting calls the stream limit and the send windows allow. */
  #start(): void {
    while (this.#waiting.length > 0 && this.#streams.size < this.#maxStreams) {
      const call = this.#waiting[0] as Call;
      const size = call.payload.length;
      // A request is sent whole, once both windows have room for it; one larger than a stream's
      // window (known once the server's SETTINGS came) never would be, so it fails at once.
      if (this.#settled && size > this.#streamWindow) {
        this.#waiting.shift();
        setImmediate(call.done, '', undefined);
        continue;
      }
      if (size > this.#sendWindow || size > this.#streamWindow) return;
      this.#waiting.shift();
      const id = this.#nextId;
      this.#nextId += 2;
      this.#sendWindow -= size;
      this.#streams.set(id, { done: call.done, block: [], blockEndsStream: false, status: '', data: [] });
      this.#write(frame(HEADERS, FLAG_END_HEADERS, id, call.path));
      for (let at = 0; at < size; at += this.#maxFrame) {
        const end = Math.min(size, at + this.#maxFrame);
        this.#write(frame(DATA, end === size ? FLAG_END_STREAM : 0, id, call.payload.subarray(at, end)));
      }
    }
  }

  #write(...frames: Buffer[]): void {
    this.#out.push(...frames);
    if (this.#flushQueued) return;
    this.#flushQueued = true;
    process.nextTick(() => {
      this.#flushQueued = false;
      const out = this.#out;
      this.#out = [];
      if (this.#closed === undefined)
        this.#socket.write(out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out));
    });
  }

  #onData(chunk: Buffer): void {
    const buf = this.#pending === undefined ? chunk : Buffer.concat([this.#pending, chunk]);
    this.#pending = undefined;
    let pos = 0;
    while (buf.length - pos >= 9) {
      const length = buf.readUIntBE(pos, 3);
      if (buf.length - pos < 9 + length) break;
      const type = buf[pos + 3] as number;
      const flags = buf[pos + 4] as number;
      const id = buf.readUInt32BE(pos + 5) & 0x7fffffff;
      this.#onFrame(type, flags, id, buf.subarray(pos + 9, pos + 9 + length));
      pos += 9 + length;
    }
    if (pos < buf.length) this.#pending = Buffer.from(buf.subarray(pos));
    this.#start();
  }

  #onFrame(type: number, flags: number, id: number, payload: Buffer): void {
    switch (type) {
      case DATA: {
        this.#received += payload.length;
        if (this.#received >= 1 << 30) {
          this.#write(windowUpdate(0, this.#received));
          this.#received = 0;
        }
        const s = this.#streams.get(id);
        if (s === undefined) return;
        s.data.push(unpad(flags, payload)); // a socket's chunks are not reused
        if ((flags & FLAG_END_STREAM) !== 0) this.#finish(id, s);
        return;
      }
      case HEADERS: {
        const s = this.#streams.get(id);
        let block = unpad(flags, payload);
        if ((flags & FLAG_PRIORITY) !== 0) block = block.subarray(5);
        if (s === undefined) {
          this.#decoder.decode(block); // keeps the decoder's table in step
          return;
        }
        s.block = [block];
        s.blockEndsStream = (flags & FLAG_END_STREAM) !== 0;
        if ((flags & FLAG_END_HEADERS) !== 0) this.#headersDone(id, s);
        return;
      }
      case CONTINUATION: {
        const s = this.#streams.get(id);
        if (s === undefined) return;
        s.block.push(payload);
        if ((flags & FLAG_END_HEADERS) !== 0) this.#headersDone(id, s);
        return;
      }
      case RST_STREAM: {
        const s = this.#streams.get(id);
        if (s === undefined) return;
        this.#streams.delete(id);
        s.done('', undefined);
        return;
      }
      case SETTINGS:
        if ((flags & FLAG_ACK) !== 0) return;
        for (let at = 0; at + 6 <= payload.length; at += 6) {
          const key = payload.readUInt16BE(at);
          const value = payload.readUInt32BE(at + 2);
          if (key === 0x3) this.#maxStreams = value;
          else if (key === 0x4) {
            // Applies to the open streams too; a request is sent whole, so only new ones matter.
            this.#streamWindow = value;
          } else if (key === 0x5) this.#maxFrame = value;
        }
        this.#settled = true;
        this.#write(frame(SETTINGS, FLAG_ACK, 0));
        return;
      case PING:
        if ((flags & FLAG_ACK) === 0) this.#write(frame(PING, FLAG_ACK, 0, payload));
        return;
      case WINDOW_UPDATE:
        if (id === 0) this.#sendWindow += payload.readUInt32BE(0) & 0x7fffffff;
        return;
      case GOAWAY: {
        const last = payload.readUInt32BE(0) & 0x7fffffff;
        for (const [sid, s] of this.#streams) {
          if (sid <= last) continue;
          this.#streams.delete(sid);
          s.done('', undefined);
        }
        // No new stream on this connection: the calls waiting for one, and any later, fail.
        this.#fail(new Error('the server sent GOAWAY'), false);
        return;
      }
      default:
        return; // PRIORITY and unknown frame types are ignored (RFC 9113 5.5)
    }
  }

  #headersDone(id: number, s: Stream): void {
    const block = s.block.length === 1 ? (s.block[0] as Buffer) : Buffer.concat(s.block);
    s.block = [];
    const { headers } = this.#decoder.decode(block);
    for (let i = 0; i + 1 < headers.length; i += 2) {
      if (headers[i] === 'grpc-status') s.status = headers[i + 1] as string;
    }
    if (s.blockEndsStream) this.#finish(id, s);
  }

  #finish(id: number, s: Stream): void {
    this.#streams.delete(id);
    const frame = s.data.length === 1 ? (s.data[0] as Buffer) : Buffer.concat(s.data);
    const message = frame.length >= 5 ? frame.subarray(5, 5 + frame.readUInt32BE(1)) : undefined;
    s.done(s.status, message);
  }

  /** No call starts after this; the open streams fail too unless `streamsToo` is false (GOAWAY). */
  #fail(e: Error, streamsToo = true): void {
    if (this.#closed === undefined) this.#closed = e;
    const streams = streamsToo ? [...this.#streams.values()] : [];
    if (streamsToo) this.#streams.clear();
    const waiting = this.#waiting.splice(0);
    for (const s of streams) s.done('', undefined);
    for (const c of waiting) c.done('', undefined);
  }
}

/** A DATA or HEADERS payload without its padding (RFC 9113 6.1, 6.2). */
function unpad(flags: number, payload: Buffer): Buffer {
  if ((flags & FLAG_PADDED) === 0) return payload;
  const pad = payload[0] as number;
  return payload.subarray(1, payload.length - pad);
}
