/**
 * Prometheus text counters for `/metrics`: requests by route and status, activities by type. Every
 * label value comes from a closed set (served routes, HTTP statuses we send, registered types).
 */
export class Metrics {
  private readonly requests = new Map<string, number>();
  private readonly seconds = new Map<string, number>();
  private readonly activities = new Map<string, number>();
  private readonly sections: (() => string)[] = [];

  /** Adds another component's metrics (already Prometheus text) to what `render` returns. */
  addSection(render: () => string): void {
    this.sections.push(render);
  }

  /** `route` must come from a closed set (a served path or 'other'), never from the request as sent. */
  request(route: string, status: number, seconds: number): void {
    const key = `route="${route}",status="${status}"`;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
    this.seconds.set(key, (this.seconds.get(key) ?? 0) + seconds);
  }

  activity(type: string): void {
    this.activities.set(type, (this.activities.get(type) ?? 0) + 1);
  }

  render(): string {
    const lines = [
      '# HELP countersign_api_requests_total Public API requests by route and HTTP status.',
      '# TYPE countersign_api_requests_total counter',
    ];
    for (const [k, v] of this.requests) lines.push(`countersign_api_requests_total{${k}} ${v}`);
    lines.push(
      '# HELP countersign_api_request_seconds_total Time spent handling public API requests.',
      '# TYPE countersign_api_request_seconds_total counter',
    );
    for (const [k, v] of this.seconds)
      lines.push(`countersign_api_request_seconds_total{${k}} ${v.toFixed(6)}`);
    lines.push(
      '# HELP countersign_activities_total Activities recorded, by type.',
      '# TYPE countersign_activities_total counter',
    );
    for (const [k, v] of this.activities) lines.push(`countersign_activities_total{type="${k}"} ${v}`);
    return `${lines.join('\n')}\n${this.sections.map((s) => s()).join('')}`;
  }
}
