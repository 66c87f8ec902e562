/**
 * What the OTP and OAuth activities need beyond their usual context: how to deliver a code (SMTP,
 * an SMS provider) and the outbound policy their calls pass. Keyed by the service's store, like the
 * webhook context. A service with no SMTP configured has no `sendEmail`, and refuses email OTPs.
 */
import type { OutboundPolicy } from '../../shared/outbound/guard.js';
import type { Store } from '../store/types.js';

export interface OutgoingEmail {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
}

export interface OutgoingSms {
  readonly to: string;
  readonly text: string;
}

export interface AuthContext {
  readonly policy: OutboundPolicy;
  readonly sendEmail?: ((m: OutgoingEmail) => Promise<void>) | undefined;
  readonly sendSms?: ((m: OutgoingSms) => Promise<void>) | undefined;
}

const CONTEXTS = new WeakMap<Store, AuthContext>();

export function attachAuthContext(store: Store, ctx: AuthContext): void {
  CONTEXTS.set(store, ctx);
}

/** The auth context of `store`'s service: the strict policy and no delivery if none was attached. */
export function authContextOf(store: Store): AuthContext {
  return CONTEXTS.get(store) ?? { policy: { allowPrivateNetwork: false } };
}
