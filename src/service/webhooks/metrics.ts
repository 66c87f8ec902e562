/**
 * Prometheus text for webhook delivery: attempts by outcome, attempt latency (a histogram in
 * seconds), the backlog and the age of its oldest due delivery. Labels come from closed sets only
 * (attempt outcomes, delivery sources); never an endpoint, URL or id.
 */
import type { WebhookAttemptOutcome, WebhookBacklog, WebhookDeliverySource } from '../store/types.js';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;

export class WebhookMetrics {
  private readonly attempts = new Map<string, number>();
  private readonly bucketCounts = BUCKETS.map(() => 0);
  private latencyCount = 0;
  private latencySum = 0;
  private backlog: WebhookBacklog = { pending: 0, oldestDueAtMs: null, nextDueAtMs: null };

  constructor(private readonly now: () => number = Date.now) {}

  attempt(source: WebhookDeliverySource, outcome: WebhookAttemptOutcome, seconds: number): void {
    const key = `source="${source}",outcome="${outcome}"`;
    this.attempts.set(key, (this.attempts.get(key) ?? 0) + 1);
    BUCKETS.forEach((b, i) => {
      if (seconds <= b) this.bucketCounts[i] = (this.bucketCounts[i] ?? 0) + 1;
    });
    this.latencyCount += 1;
    this.latencySum += seconds;
  }

  setBacklog(b: WebhookBacklog): void {
    this.backlog = b;
  }

  render(): string {
    const lines = [
      '# HELP countersign_webhook_attempts_total Webhook delivery attempts by source and outcome (DELIVERED, RETRY, FAILED).',
      '# TYPE countersign_webhook_attempts_total counter',
    ];
    for (const [k, v] of this.attempts) lines.push(`countersign_webhook_attempts_total{${k}} ${v}`);
    lines.push(
      '# HELP countersign_webhook_attempt_seconds Time from dialling a receiver to its complete answer.',
      '# TYPE countersign_webhook_attempt_seconds histogram',
    );
    BUCKETS.forEach((b, i) =>
      lines.push(`countersign_webhook_attempt_seconds_bucket{le="${b}"} ${this.bucketCounts[i] ?? 0}`),
    );
    lines.push(
      `countersign_webhook_attempt_seconds_bucket{le="+Inf"} ${this.latencyCount}`,
      `countersign_webhook_attempt_seconds_sum ${this.latencySum.toFixed(6)}`,
      `countersign_webhook_attempt_seconds_count ${this.latencyCount}`,
      '# HELP countersign_webhook_backlog Webhook deliveries neither delivered nor failed yet.',
      '# TYPE countersign_webhook_backlog gauge',
      `countersign_webhook_backlog ${this.backlog.pending}`,
      '# HELP countersign_webhook_oldest_due_seconds How long the oldest due webhook delivery has been waiting.',
      '# TYPE countersign_webhook_oldest_due_seconds gauge',
      `countersign_webhook_oldest_due_seconds ${
        this.backlog.oldestDueAtMs === null
          ? 0
          : Math.max(0, (this.now() - this.backlog.oldestDueAtMs) / 1000)
      }`,
    );
    return `${lines.join('\n')}\n`;
  }
}
