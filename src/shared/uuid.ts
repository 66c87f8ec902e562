const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `v` is a UUID in its 8-4-4-4-12 hex form (the form organization and resource ids take). */
export function isUuid(v: string): boolean {
  return UUID_RE.test(v);
}
