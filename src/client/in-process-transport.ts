/** The embedded transport: the service's request handler called directly with the stamped bytes. */
import { CountersignError, isCountersignError } from '../shared/errors.js';
import type { RequestHandler, Transport } from './transport.js';

/** Wraps the service's in-process request handler as a transport (no socket, same checks). */
export function inProcessTransport(handler: RequestHandler): Transport {
  return {
    async send(req) {
      try {
        return await handler(req);
      } catch (cause) {
        // The handler answers errors as responses; a throw is a fault of the service itself.
        if (isCountersignError(cause)) throw cause;
        throw new CountersignError('UPSTREAM_ERROR', 'the embedded public API failed to answer', { cause });
      }
    },
    async close() {},
  };
}
