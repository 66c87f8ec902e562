/** What every handler gets: the client, the defaults, the idempotency store, and its logger. */
import type { Logger } from 'pino';
import type { PublicApiClient } from '../client/client.js';
import type { ExpectedSignerResolver } from './expected-signer.js';
import type { IdempotencyStore } from './idempotency.js';

export interface DaemonContext {
  readonly client: PublicApiClient;
  readonly defaultOrganizationId: string;
  /** Keys are scoped per caller when callers are configured (one caller cannot replay another's). */
  readonly idempotency: Pick<IdempotencyStore, 'claim' | 'refresh'>;
  readonly signers: ExpectedSignerResolver;
}

/** Per-call facts: the request's child logger. */
export interface CallContext {
  readonly log: Logger;
}
