/**
 * How the client reaches the public API: over HTTP (remote) or by calling the service's request
 * handler directly with the same stamped bytes (embedded: no socket, same code path, same checks).
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

/** The service's request handler has this shape too, so it can be used as a transport as is. */
export type RequestHandler = (req: TransportRequest) => Promise<TransportResponse>;

export interface Transport {
  send(req: TransportRequest): Promise<TransportResponse>;
  close(): Promise<void>;
}
