/**
 * How the client reaches the public API: over HTTP (remote) or by calling the service's request
 * handler directly with the same stamped bytes (embedded: no socket, same code path, same checks).
 * The request and response shapes are the shared contract of src/shared/request-handler.ts.
 */
import type { TransportRequest, TransportResponse } from '../shared/request-handler.js';

export type { RequestHandler, TransportRequest, TransportResponse } from '../shared/request-handler.js';

export interface Transport {
  send(req: TransportRequest): Promise<TransportResponse>;
  close(): Promise<void>;
}
