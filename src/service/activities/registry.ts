/** Every activity the service accepts, keyed by its versioned `type`. */
import { EXPORT_ACTIVITIES } from './exports.js';
import { POLICY_ACTIVITIES } from './policies.js';
import { SIGNING_ACTIVITIES } from './signing.js';
import type { ActivityDefinition } from './types.js';
import { WALLET_ACTIVITIES } from './wallets.js';

export const ACTIVITIES: readonly ActivityDefinition[] = [
  ...WALLET_ACTIVITIES,
  ...SIGNING_ACTIVITIES,
  ...POLICY_ACTIVITIES,
  ...EXPORT_ACTIVITIES,
];
