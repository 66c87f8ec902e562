/** What every handler gets: the client, the defaults, the idempotency store, and its logger. */
import type { Logger } from 'pino';
import type { PublicApiClient } from '../client/client.js';
import type { ExpectedSignerResolver } from './expected-signer.js';
import type { IdempotencyStore } from './idempotency.js';
import { invalid } from '../shared/errors.js';
import { isUuid } from '../shared/uuid.js';

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

/**
 * The organization a call acts in: the request's `organization_id`, or the daemon's default when
 * it is empty. One that is not a UUID is refused here, naming the field, before anything is sent.
 */
export function organizationOf(ctx: DaemonContext, requested: string): string {
  if (requested === '') return ctx.defaultOrganizationId;
  if (!isUuid(requested)) throw invalid('organization_id', 'must be a UUID');
  return requested;
}
