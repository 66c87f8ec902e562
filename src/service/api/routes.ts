/**
 * Which POST paths the public API serves, and how it refuses the others: a path of Turnkey's API
 * that countersign does not serve is UNIMPLEMENTED (HTTP 501, code 12), any other NOT_FOUND. The
 * HTTP listener asks before reading a body; the handler asks again for callers without a listener.
 */
import { CountersignError } from '../../shared/errors.js';
import { DECISION_ACTIVITIES } from '../activities/decisions.js';
import { ACTIVITIES } from '../activities/registry.js';
import { EVALUATE_POLICIES_QUERY } from './evaluate-policies.js';
import { isQuery } from './queries.js';
import { TURNKEY_QUERY_PATHS, TURNKEY_SUBMIT_PATHS } from './turnkeyRoutes.js';

export const SUBMIT_PREFIX = '/public/v1/submit/';
export const QUERY_PREFIX = '/public/v1/query/';
/** countersign's own query: the running build and its app-proof key, signed by the service signer key. */
export const BUILD_ATTESTATION_QUERY = 'get_build_attestation';

const SUBMIT_NAMES: ReadonlySet<string> = new Set([
  ...ACTIVITIES.map((d) => d.path),
  ...DECISION_ACTIVITIES.map((d) => d.path),
]);

export function servesSubmit(name: string): boolean {
  return SUBMIT_NAMES.has(name);
}

export function servesQuery(name: string): boolean {
  return isQuery(name) || name === EVALUATE_POLICIES_QUERY || name === BUILD_ATTESTATION_QUERY;
}

/** Whether the public API serves this POST path. */
export function publicApiRoute(path: string): boolean {
  if (path.startsWith(SUBMIT_PREFIX)) return servesSubmit(path.slice(SUBMIT_PREFIX.length));
  if (path.startsWith(QUERY_PREFIX)) return servesQuery(path.slice(QUERY_PREFIX.length));
  return false;
}

/** The refusal of a POST path the public API does not serve. */
export function unservedRoute(path: string): CountersignError {
  const submit = path.startsWith(SUBMIT_PREFIX);
  const query = path.startsWith(QUERY_PREFIX);
  const name = path.slice((submit ? SUBMIT_PREFIX : QUERY_PREFIX).length);
  if ((submit && TURNKEY_SUBMIT_PATHS.has(name)) || (query && TURNKEY_QUERY_PATHS.has(name)))
    return new CountersignError(
      'ROUTE_UNIMPLEMENTED',
      `${path} is part of Turnkey's API but countersign does not serve it`,
    );
  if (submit) return new CountersignError('ROUTE_NOT_FOUND', `unknown activity path ${path}`);
  if (query) return new CountersignError('ROUTE_NOT_FOUND', `unknown query path ${path}`);
  return new CountersignError('ROUTE_NOT_FOUND', `no route for POST ${path}`);
}
