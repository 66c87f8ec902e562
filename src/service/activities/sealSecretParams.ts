/**
 * Secret parameters (an on-ramp provider's API keys, a container pull secret) never reach the store
 * in plaintext: the handler seals them with the key vault before the activity's intent and its
 * first vote are recorded, and the activity opens them again when it runs. The recorded intent (and
 * what `get_activity` shows) holds the sealed token instead of the secret.
 */
import { CountersignError, invalid } from '../../shared/errors.js';
import { utf8 } from '../../shared/encoding.js';
import type { KeyVault } from '../keys/index.js';
import type { Params } from './params.js';

const PREFIX = 'countersign-sealed:v1:';

/** Vault AAD of a sealed parameter: bound to the activity and the field, so a token cannot move. */
const aadOf = (activityId: string, field: string): string => `activity/${activityId}/parameters.${field}`;

/** `params` with each present string value of `fields` replaced by its sealed token. */
export function sealSecretParams(
  vault: KeyVault,
  activityId: string,
  params: Params,
  fields: readonly string[],
): Params {
  const out: Record<string, unknown> = { ...params };
  for (const f of fields) {
    const v = params[f];
    if (typeof v !== 'string') continue;
    out[f] = PREFIX + Buffer.from(vault.seal(utf8(v), aadOf(activityId, f))).toString('base64url');
  }
  return out;
}

/**
 * The plaintext bytes of a sealed parameter; the caller zeroes them. `undefined` when absent or
 * null; FIELD_INVALID naming the field when it is not a string or not a token of this activity.
 */
export function openSecretParam(
  vault: KeyVault,
  activityId: string,
  params: Params,
  field: string,
): Uint8Array | undefined {
  const v = params[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalid(`parameters.${field}`, 'must be a string');
  if (!v.startsWith(PREFIX))
    throw new CountersignError('INTERNAL', `parameters.${field} reached the activity unsealed`);
  return vault.open(
    new Uint8Array(Buffer.from(v.slice(PREFIX.length), 'base64url')),
    aadOf(activityId, field),
  );
}
