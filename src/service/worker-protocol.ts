/** Messages between `countersign serve` and the service worker thread. */
import type { DaemonSignerCredentials } from './daemonSigner.js';
import type { MetricFamilies } from '../observability/metrics.js';
import type { Credentials, DeliveryOptions } from './embedded.js';

export interface ServiceWorkerData {
  readonly dataDir: string;
  /** `--store` (PostgreSQL URL), or undefined for SQLite in the data dir. */
  readonly store?: string | undefined;
  readonly logLevel: string;
  readonly masterKeyEnv: string | undefined;
  readonly maxRequestAgeMs: number;
  readonly maxClockSkewMs: number;
  /** `--chain-rpc` as [caip2, url] pairs (a Map does not cross postMessage as one). */
  readonly chainRpc: readonly (readonly [string, string])[];
  /** `--allow-private-network` (outbound guard relaxed for development). */
  readonly allowPrivateNetwork?: boolean;
  /** `--webhook-max-age-seconds`, in ms. */
  readonly webhookMaxAgeMs?: number;
  /** `--console-origin`: the origin console passkeys are registered at. */
  readonly consoleOrigin?: string; // --- console ---
  /** `--service-name`: the `service` label on this thread's metric families. */
  readonly serviceName?: string;
  /** `--otlp-endpoint`: this thread exports its spans there too; undefined = tracing off. */
  readonly otlpEndpoint?: string;
  /** --- auth proxy --- OTP delivery settings (--smtp-*, --sms-*). */
  readonly delivery?: DeliveryOptions;
  /** --- auth proxy --- `--proxy-listen` (the proxy runs on this thread, beside the vault). */
  readonly authProxyListen?: { readonly host: string; readonly port: number };
}

export type HostMessage =
  | {
      readonly kind: 'request';
      readonly id: number;
      readonly path: string;
      readonly headers: Readonly<Record<string, string>>;
      readonly body: Uint8Array;
    }
  | { readonly kind: 'metrics'; readonly id: number }
  | { readonly kind: 'ping'; readonly id: number }
  | { readonly kind: 'close' };

export type WorkerMessage =
  | {
      readonly kind: 'ready';
      readonly credentials: Credentials;
      readonly daemonSigner: DaemonSignerCredentials;
      readonly sponsorAddress: string;
      /** Every POST path the public API serves (the listener refuses others before reading a body). */
      readonly routes: readonly string[];
    }
  | { readonly kind: 'failed'; readonly message: string }
  | { readonly kind: 'response'; readonly id: number; readonly status: number; readonly body: Uint8Array }
  | {
      readonly kind: 'metrics';
      readonly id: number;
      readonly text: string;
      /** This thread's prom-client families, aggregated with the main thread's at the scrape. */
      readonly families: MetricFamilies;
    }
  | { readonly kind: 'pong'; readonly id: number; readonly ok: boolean }
  | { readonly kind: 'closed' };
