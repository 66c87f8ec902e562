/**
 * What the webhook activities and the activity writers need beyond their usual context: the
 * outbound policy a URL is checked against at creation, and a way to wake the dispatcher once a
 * write that queued deliveries has committed. Keyed by the service's store, like the send context.
 */
import type { OutboundPolicy } from '../../shared/outbound/guard.js';
import type { Store } from '../store/types.js';

export interface WebhookContext {
  readonly policy: OutboundPolicy;
  /** Tells the dispatcher that deliveries may be due now (cheap; call after a commit). */
  wake(): void;
}

const CONTEXTS = new WeakMap<Store, WebhookContext>();

/** Makes `ctx` the webhook context of the service that owns `store`. */
export function attachWebhookContext(store: Store, ctx: WebhookContext): void {
  CONTEXTS.set(store, ctx);
}

/** The webhook context of `store`'s service: the strict policy and no dispatcher if none was attached. */
export function webhookContextOf(store: Store): WebhookContext {
  return CONTEXTS.get(store) ?? { policy: { allowPrivateNetwork: false }, wake: () => {} };
}
