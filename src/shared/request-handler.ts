/**
 * The contract between the public API's request handler (src/service) and the client that calls it
 * (src/client): one stamped request in, one response out. Embedded, the client's transport calls the
 * handler directly with the same bytes (no socket, same code path, same checks).
 */

/** One public-API request as it travels: the exact body bytes the stamp covers. */
export interface TransportRequest {
  /** `/public/v1/submit/<name>` or `/public/v1/query/<name>`. */
  readonly path: string;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
}

export interface TransportResponse {
  readonly status: number;
  /** JSON bytes. */
  readonly body: Uint8Array;
}

/**
 * Request header by which a client asks for an activity's summary instead of the whole activity
 * (value `summary`; src/service/api/envelope.ts `activitySummary`).
 */
export const ANSWER_HEADER = 'x-countersign-answer';

/** The service's request handler has this shape too, so it can be used as a transport as is. */
export type RequestHandler = (req: TransportRequest) => Promise<TransportResponse>;
