/**
 * A memo of a pure function of public values (addresses, public keys), bounded so that a stream
 * of distinct inputs cannot grow it without limit: when full, the oldest entry is dropped (the
 * hot entries are re-added on their next miss). Never for anything secret.
 */
export class BoundedMemo<K, V> {
  readonly limit: number;
  readonly #map = new Map<K, V>();

  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
    this.limit = limit;
  }

  get size(): number {
    return this.#map.size;
  }

  get(key: K): V | undefined {
    return this.#map.get(key);
  }

  /** The remembered value for `key`, or `compute()`'s, remembered. */
  through(key: K, compute: () => V): V {
    const known = this.#map.get(key);
    if (known !== undefined) return known;
    const value = compute();
    this.set(key, value);
    return value;
  }

  set(key: K, value: V): void {
    if (this.#map.size >= this.limit && !this.#map.has(key)) {
      // Map iterates in insertion order: the first key is the oldest.
      const oldest = this.#map.keys().next();
      if (oldest.done !== true) this.#map.delete(oldest.value);
    }
    this.#map.set(key, value);
  }
}
