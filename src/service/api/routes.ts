/**
 * Which POST paths the public API serves (unserved.ts says how it refuses the others). The HTTP
 * listener asks before reading a body; the handler asks again for callers without a listener.
 */
import { DECISION_ACTIVITIES } from '../activities/decisions.js';
import { ACTIVITIES } from '../activities/registry.js';
import { EVALUATE_POLICIES_QUERY } from './evaluate-policies.js';
import { queryNames } from './queries.js';
import { QUERY_PREFIX, SUBMIT_PREFIX } from './unserved.js';

export { QUERY_PREFIX, SUBMIT_PREFIX, unservedRoute } from './unserved.js';

/** countersign's own query: the running build and its app-proof key, signed by the service signer key. */
export const BUILD_ATTESTATION_QUERY = 'get_build_attestation';

const SUBMIT_NAMES: ReadonlySet<string> = new Set([
  ...ACTIVITIES.map((d) => d.path),
  ...DECISION_ACTIVITIES.map((d) => d.path),
]);

export function servesSubmit(name: string): boolean {
  return SUBMIT_NAMES.has(name);
}

const QUERY_NAMES: ReadonlySet<string> = new Set([
  ...queryNames(),
  EVALUATE_POLICIES_QUERY,
  BUILD_ATTESTATION_QUERY,
]);

export function servesQuery(name: string): boolean {
  return QUERY_NAMES.has(name);
}

/** Whether the public API serves this POST path. */
export function publicApiRoute(path: string): boolean {
  if (path.startsWith(SUBMIT_PREFIX)) return servesSubmit(path.slice(SUBMIT_PREFIX.length));
  if (path.startsWith(QUERY_PREFIX)) return servesQuery(path.slice(QUERY_PREFIX.length));
  return false;
}

/** Every POST path the public API serves: the service thread sends these to the HTTP listener. */
export function servedRoutes(): string[] {
  return [
    ...[...SUBMIT_NAMES].map((n) => SUBMIT_PREFIX + n),
    ...[...QUERY_NAMES].map((n) => QUERY_PREFIX + n),
  ];
}
