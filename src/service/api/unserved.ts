/**
 * The public API's path prefixes and how it refuses a POST path it does not serve, apart from the
 * activity registry: the HTTP listener on the gRPC thread refuses with these before it reads a body,
 * knowing the served paths from the service thread (see `servedRoutes` in routes.ts).
 */
import { CountersignError } from '../../shared/errors.js';
import { TURNKEY_QUERY_PATHS, TURNKEY_SUBMIT_PATHS } from './turnkeyRoutes.js';

export const SUBMIT_PREFIX = '/public/v1/submit/';
export const QUERY_PREFIX = '/public/v1/query/';

/**
 * The refusal of a POST path the public API does not serve: a path of Turnkey's API that
 * countersign does not serve is UNIMPLEMENTED (HTTP 501, code 12), any other NOT_FOUND.
 */
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
