/** Store records for store-level tests. */
import { randomUUID } from 'node:crypto';
import type { PolicyRecord } from '../../src/service/store/types.js';

/** An allow-all policy named `name` in `organizationId`, created and updated at `atMs`. */
export const allowPolicy = (organizationId: string, name: string, atMs: number): PolicyRecord => ({
  id: randomUUID(),
  organizationId,
  name,
  effect: 'EFFECT_ALLOW',
  condition: null,
  consensus: null,
  time: null,
  notes: '',
  createdAtMs: atMs,
  updatedAtMs: atMs,
});
