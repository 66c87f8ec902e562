/**
 * What eth_send_transaction needs beyond an ActivityContext: the configured chains, the filled
 * transactions its `facts` hook computed (so `run` signs exactly what the policy gate saw) and the
 * tracker to hand a committed send to. Keyed by the service's store, so two services in one
 * process never share chains or sends.
 */
import type { Store } from '../store/types.js';
import type { EthChains } from './chains.js';
import type { GasStation } from './gasStation.js';

export interface SendContext {
  readonly chains: EthChains;
  /** The sponsor key and batch executor that batches and sponsored sends go through. */
  readonly gasStation: GasStation | undefined;
  /** Broadcasts a committed send now instead of at the tracker's next tick. */
  kick(sendTransactionStatusId: string): void;
}

const CONTEXTS = new WeakMap<Store, SendContext>();

/** Makes `ctx` the send context of the service that owns `store`. */
export function attachSendContext(store: Store, ctx: SendContext): void {
  CONTEXTS.set(store, ctx);
}

/** The send context of `store`'s service; no chains if none was attached. */
export function sendContextOf(store: Store): SendContext {
  return CONTEXTS.get(store) ?? { chains: new Map(), gasStation: undefined, kick: () => {} };
}

/** A per-activity cache with a short life: facts fill, run takes; a denied activity's entry expires. */
export class PreparedCache<T> {
  readonly #entries = new Map<string, { value: T; atMs: number }>();
  constructor(private readonly ttlMs: number) {}

  put(key: string, value: T, nowMs: number): void {
    for (const [k, e] of this.#entries) if (nowMs - e.atMs > this.ttlMs) this.#entries.delete(k);
    this.#entries.set(key, { value, atMs: nowMs });
  }

  /** Removes and returns the entry, if it is still fresh. */
  take(key: string, nowMs: number): T | undefined {
    const e = this.#entries.get(key);
    this.#entries.delete(key);
    return e === undefined || nowMs - e.atMs > this.ttlMs ? undefined : e.value;
  }
}
