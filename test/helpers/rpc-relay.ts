/**
 * A JSON-RPC relay in front of a real node, for crash tests: it forwards every call unchanged, but
 * lets a test decide, per signed transaction sent with `eth_sendRawTransaction`, whether the node
 * gets it and whether the caller learns the node's answer. That is how a test puts a send in a
 * chosen state at the moment the service dies (on chain, in the pool, in the pool without the
 * service knowing, never seen by the node) without touching the service. Nothing is faked: every
 * answer the caller gets for a forwarded call is the node's.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Hex } from 'viem';

/**
 * What happens to one signed transaction, each time it is broadcast:
 * - `forward`: the node gets it and the caller gets the node's answer;
 * - `forward-then-lose`: the node gets it, the caller never learns the answer;
 * - `hold`: the node never gets it, the caller never learns why;
 * - `refuse`: the node never gets it, the caller gets an error naming no known condition (what a
 *   caller reads as "unreachable, try again later").
 * An answer is "never learnt" by leaving the request open. viem batches calls, so when a request
 * also holds other calls, those get the node's answers and a lost or held broadcast is refused.
 */
export type BroadcastFate = 'forward' | 'forward-then-lose' | 'hold' | 'refuse';

/** Decides the fate of a transaction the relay has not seen yet; `nth` counts them from 1. */
export type DecideFate = (raw: Hex, nth: number) => BroadcastFate;

export interface RpcRelayOptions {
  /** The node's JSON-RPC URL. */
  readonly target: string;
  /**
   * Called once per distinct transaction, in arrival order; its answer holds for every later
   * broadcast of the same bytes. Requests holding broadcasts are handled one at a time, so a
   * decision and its `afterForward` finish before the next broadcast is looked at.
   */
  readonly decide?: DecideFate;
  /** Runs each time the node has answered a forwarded broadcast, before the next one is handled. */
  readonly afterForward?: (raw: Hex, nth: number) => Promise<void>;
}

export interface RpcRelay {
  readonly url: string;
  /** Every raw transaction the node received through the relay, in order (rebroadcasts included). */
  readonly forwarded: readonly Hex[];
  /** Distinct transactions seen so far, whatever their fate. */
  seen(): number;
  /** Resolves once every broadcast that has arrived so far has been handled. */
  idle(): Promise<void>;
  /** Decides with `decide` from now on, for every transaction (fates decided earlier are forgotten). */
  setDecide(decide: DecideFate): void;
  close(): Promise<void>;
}

interface RpcCall {
  readonly id?: unknown;
  readonly method?: unknown;
  readonly params?: unknown;
}

/** A call of a request, and what happens to it if it is a broadcast. */
interface Decided {
  readonly call: RpcCall;
  readonly fate: BroadcastFate;
  readonly raw?: Hex;
  readonly nth?: number;
}

interface RpcAnswer {
  readonly jsonrpc?: string;
  readonly id?: unknown;
  readonly result?: unknown;
  readonly error?: { code: number; message: string };
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

/** Sends the bytes of a request to the node as they are; returns its answer as it is. */
async function passThrough(target: string, body: string): Promise<{ status: number; text: string }> {
  const res = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: res.status, text: await res.text() };
}

/** Sends a call (or a batch) to the node and returns its JSON answer. */
async function forward(target: string, body: unknown): Promise<RpcAnswer | RpcAnswer[]> {
  const res = await fetch(target, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return (await res.json()) as RpcAnswer | RpcAnswer[];
}

/** The raw transaction of an `eth_sendRawTransaction` call, if it is one. */
function rawOf(call: RpcCall): Hex | undefined {
  if (call.method !== 'eth_sendRawTransaction' || !Array.isArray(call.params)) return undefined;
  const raw: unknown = call.params[0];
  return typeof raw === 'string' ? (raw as Hex) : undefined;
}

/** Starts a relay to `opts.target` on an ephemeral port. */
export async function startRpcRelay(opts: RpcRelayOptions): Promise<RpcRelay> {
  const forwarded: Hex[] = [];
  let decide: DecideFate = opts.decide ?? (() => 'forward');
  let fates = new Map<Hex, { fate: BroadcastFate; nth: number }>();
  // Requests holding broadcasts, one at a time in arrival order.
  let queue: Promise<void> = Promise.resolve();

  const fateOf = (raw: Hex) => {
    let f = fates.get(raw);
    if (f === undefined) {
      const nth = fates.size + 1;
      f = { fate: decide(raw, nth), nth };
      fates.set(raw, f);
    }
    return f;
  };

  const reply = (res: ServerResponse, status: number, text: string) => {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(text);
  };

  /**
   * A request holding broadcasts (alone or in a JSON-RPC batch, as viem sends them). Each broadcast
   * goes to the node on its own, in order, so `afterForward` runs between two of them; the other
   * calls go together.
   */
  const relayBroadcasts = async (batch: boolean, calls: RpcCall[], res: ServerResponse): Promise<void> => {
    const decided = calls.map((call): Decided => {
      const raw = rawOf(call);
      return raw === undefined ? { call, fate: 'forward' } : { call, raw, ...fateOf(raw) };
    });
    const answers = new Map<unknown, RpcAnswer>();
    const others = decided.filter((d) => d.raw === undefined).map((d) => d.call);
    if (others.length > 0)
      for (const a of [await forward(opts.target, batch ? others : others[0])].flat()) answers.set(a.id, a);
    for (const d of decided) {
      if (d.raw === undefined || d.fate === 'hold' || d.fate === 'refuse') continue;
      answers.set(d.call.id, (await forward(opts.target, d.call)) as RpcAnswer);
      forwarded.push(d.raw);
      await opts.afterForward?.(d.raw, d.nth ?? 0);
    }
    const answerOf = (d: Decided): RpcAnswer =>
      (d.fate === 'forward' ? answers.get(d.call.id) : undefined) ?? {
        jsonrpc: '2.0',
        id: d.call.id,
        error: { code: -32000, message: 'relay: the node is unreachable' },
      };
    // Only broadcasts, one of them lost or held: the request stays open until the caller or the
    // relay goes away.
    const silent = decided.some((d) => d.fate === 'forward-then-lose' || d.fate === 'hold');
    if (silent && decided.every((d) => d.raw !== undefined)) return;
    // Otherwise the node's answers go back, and every other broadcast is refused.
    reply(res, 200, JSON.stringify(batch ? decided.map(answerOf) : answerOf(decided[0] as Decided)));
  };

  const server = createServer((req, res) => {
    void (async () => {
      try {
        const body = await readBody(req);
        let parsed: unknown;
        try {
          parsed = JSON.parse(body);
        } catch {
          parsed = undefined;
        }
        const calls = (Array.isArray(parsed) ? (parsed as unknown[]) : [parsed]).map((c) =>
          typeof c === 'object' && c !== null ? (c as RpcCall) : {},
        );
        if (calls.every((c) => rawOf(c) === undefined)) {
          const answer = await passThrough(opts.target, body);
          reply(res, answer.status, answer.text);
          return;
        }
        const turn = queue.then(() => relayBroadcasts(Array.isArray(parsed), calls, res));
        queue = turn.catch(() => {});
        await turn;
      } catch (e) {
        reply(
          res,
          502,
          JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: String(e) } }),
        );
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    forwarded,
    seen: () => fates.size,
    idle: () => queue,
    setDecide: (d) => {
      decide = d;
      fates = new Map();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
