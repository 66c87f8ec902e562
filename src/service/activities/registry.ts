/** Every activity the service accepts, keyed by its versioned `type`. */
import { ADMIN_ACTIVITIES } from './admin.js';
import { EXPORT_ACTIVITIES } from './exports.js';
import { IMPORT_ACTIVITIES } from './imports.js'; // --- key and wallet import ---
import { ORGANIZATION_ACTIVITIES } from './organizations.js'; // --- sub-organizations and sessions ---
import { SESSION_ACTIVITIES } from './sessions.js'; // --- sub-organizations and sessions ---
import { POLICY_ACTIVITIES } from './policies.js';
import { SIGNING_ACTIVITIES } from './signing.js';
import { RESOURCE_ACTIVITIES } from './resources.js';
import { SEND_TRANSACTION_ACTIVITIES } from './send-transaction.js'; // --- eth send transaction ---
import type { ActivityDefinition } from './types.js';
import { USER_ACTIVITIES } from './users.js';
import { WALLET_ACTIVITIES } from './wallets.js';
import { WEBHOOK_ACTIVITIES } from './webhooks.js'; // --- webhooks ---
import { AUTH_PROXY_ACTIVITIES } from './authProxy.js'; // --- auth proxy ---
import { OTP_ACTIVITIES } from './otp.js'; // --- auth proxy ---
import { LEGACY_AUTH_ACTIVITIES } from './legacyAuth.js'; // --- older login flows ---
import { OAUTH_ACTIVITIES } from './oauth.js'; // --- oauth ---

export const ACTIVITIES: readonly ActivityDefinition[] = [
  ...WALLET_ACTIVITIES,
  ...SIGNING_ACTIVITIES,
  ...SEND_TRANSACTION_ACTIVITIES, // --- eth send transaction ---
  ...POLICY_ACTIVITIES,
  ...EXPORT_ACTIVITIES,
  ...RESOURCE_ACTIVITIES,
  ...USER_ACTIVITIES,
  ...ORGANIZATION_ACTIVITIES, // --- sub-organizations and sessions ---
  ...SESSION_ACTIVITIES, // --- sub-organizations and sessions ---
  ...ADMIN_ACTIVITIES,
  ...IMPORT_ACTIVITIES, // --- key and wallet import ---
  ...WEBHOOK_ACTIVITIES, // --- webhooks ---
  ...AUTH_PROXY_ACTIVITIES, // --- auth proxy ---
  ...OTP_ACTIVITIES, // --- auth proxy ---
  ...LEGACY_AUTH_ACTIVITIES, // --- older login flows ---
  ...OAUTH_ACTIVITIES, // --- oauth ---
];
