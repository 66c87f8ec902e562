/** Validation of activity parameters at the edge: each reader names the field it rejects. */
import { isUuid } from '../../shared/uuid.js';
import { CountersignError, invalid, missing } from '../../shared/errors.js';

export type Params = Readonly<Record<string, unknown>>;

export function asObject(value: unknown, field: string): Params {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid(field, 'must be a JSON object');
  return value as Params;
}

export function reqString(p: Params, key: string, prefix: string): string {
  const v = p[key];
  if (v === undefined || v === null) throw missing(`${prefix}.${key}`);
  if (typeof v !== 'string') throw invalid(`${prefix}.${key}`, 'must be a string');
  if (v.length === 0) throw invalid(`${prefix}.${key}`, 'must not be empty');
  return v;
}

export function optString(p: Params, key: string, prefix: string): string | undefined {
  const v = p[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalid(`${prefix}.${key}`, 'must be a string');
  return v;
}

export function optBool(p: Params, key: string, prefix: string): boolean | undefined {
  const v = p[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw invalid(`${prefix}.${key}`, 'must be a boolean');
  return v;
}

export function optNumber(p: Params, key: string, prefix: string): number | undefined {
  const v = p[key];
  if (v === undefined || v === null) return undefined;
  const digits = typeof v === 'string' && /^[0-9]+$/.test(v);
  const n = typeof v === 'number' ? v : digits ? Number(v) : NaN;
  if (Number.isSafeInteger(n)) return n;
  throw invalid(
    `${prefix}.${key}`,
    digits || Number.isInteger(n) ? 'must be an integer of at most 2^53 - 1 in size' : 'must be an integer',
  );
}

export function reqArray(p: Params, key: string, prefix: string): readonly unknown[] {
  const v = p[key];
  if (v === undefined || v === null) throw missing(`${prefix}.${key}`);
  if (!Array.isArray(v)) throw invalid(`${prefix}.${key}`, 'must be an array');
  return v;
}

export function optArray(p: Params, key: string, prefix: string): readonly unknown[] | undefined {
  const v = p[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw invalid(`${prefix}.${key}`, 'must be an array');
  return v;
}

export function reqEnum<T extends string>(p: Params, key: string, prefix: string, values: readonly T[]): T {
  const v = reqString(p, key, prefix);
  if (!(values as readonly string[]).includes(v))
    throw invalid(`${prefix}.${key}`, `must be one of ${values.join(', ')}; got '${v}'`);
  return v as T;
}

export function stringArray(values: readonly unknown[], field: string): string[] {
  return values.map((v, i) => {
    if (typeof v !== 'string') throw invalid(`${field}.${i}`, 'must be a string');
    return v;
  });
}

export { isUuid };

export function reqUuid(p: Params, key: string, prefix: string): string {
  const v = reqString(p, key, prefix);
  if (!isUuid(v)) throw invalid(`${prefix}.${key}`, 'must be a UUID');
  return v;
}

export function notFound(field: string, what: string): CountersignError {
  return new CountersignError('RESOURCE_NOT_FOUND', `${field}: no ${what} found with the given ID`, {
    field,
  });
}
