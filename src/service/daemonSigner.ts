/**
 * The gRPC daemon's own identity in the embedded organization: a non-root user with its own API key
 * and one named ALLOW policy for signing. The daemon never acts as root, so every policy an operator
 * writes binds every gRPC call; narrowing or deleting the policy narrows or stops the daemon.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { CountersignError } from '../shared/errors.js';
import { newP256ApiKey, writeSecretFile } from './localCredentials.js';
import type { Store } from './store/types.js';

/** `<data-dir>/daemon-signer.json` (mode 0600): the daemon user's API key. */
export const DAEMON_SIGNER_FILE = 'daemon-signer.json';
export const DAEMON_SIGNER_USER_NAME = 'countersign-daemon';
export const DAEMON_SIGNER_POLICY_NAME = 'countersign daemon may sign';

export interface DaemonSignerCredentials {
  readonly organizationId: string;
  readonly userId: string;
  readonly apiPublicKey: string;
  readonly apiPrivateKey: string;
}

function read(path: string): DaemonSignerCredentials {
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    if (
      typeof v.organizationId === 'string' &&
      typeof v.userId === 'string' &&
      typeof v.apiPublicKey === 'string' &&
      typeof v.apiPrivateKey === 'string'
    )
      return {
        organizationId: v.organizationId,
        userId: v.userId,
        apiPublicKey: v.apiPublicKey,
        apiPrivateKey: v.apiPrivateKey,
      };
  } catch (cause) {
    throw new CountersignError('CONFIG_INVALID', `${path} is unreadable or not JSON`, { cause });
  }
  throw new CountersignError(
    'CONFIG_INVALID',
    `${path} needs organizationId, userId, apiPublicKey and apiPrivateKey`,
  );
}

/**
 * Returns the daemon signer's credentials, creating the user, its key and its policy on first use
 * (also on data dirs initialized before the daemon had its own identity).
 */
export async function ensureDaemonSigner(input: {
  readonly store: Store;
  readonly dataDir: string;
  readonly organizationId: string;
  readonly logger: Logger;
}): Promise<DaemonSignerCredentials> {
  const path = join(input.dataDir, DAEMON_SIGNER_FILE);
  if (existsSync(path)) return read(path);
  const now = Date.now();
  const userId = randomUUID();
  const key = newP256ApiKey();
  await input.store.write(async (tx) => {
    await tx.insertUser({
      id: userId,
      organizationId: input.organizationId,
      name: DAEMON_SIGNER_USER_NAME,
      email: null,
      phoneNumber: null,
      isRoot: false,
      createdAtMs: now,
      updatedAtMs: now,
    });
    await tx.insertApiKey({
      id: randomUUID(),
      userId,
      organizationId: input.organizationId,
      name: 'countersign daemon',
      publicKey: key.publicKey,
      curve: 'API_KEY_CURVE_P256',
      expiresAtMs: null,
      createdAtMs: now,
    });
    // A second daemon identity (the file was lost) gets its own policy name.
    const name = (await tx.policyNameTaken(input.organizationId, DAEMON_SIGNER_POLICY_NAME))
      ? `${DAEMON_SIGNER_POLICY_NAME} (${userId})`
      : DAEMON_SIGNER_POLICY_NAME;
    await tx.insertPolicy({
      id: randomUUID(),
      organizationId: input.organizationId,
      name,
      effect: 'EFFECT_ALLOW',
      condition: "activity.resource == 'PRIVATE_KEY' && activity.action == 'SIGN'",
      consensus: `approvers.any(user, user.id == '${userId}')`,
      time: null,
      notes:
        'Lets the gRPC daemon sign with any key of the organization. Narrow the condition (chains, addresses, amounts) or delete this policy to limit or stop it.',
      createdAtMs: now,
      updatedAtMs: now,
    });
  });
  const creds: DaemonSignerCredentials = {
    organizationId: input.organizationId,
    userId,
    apiPublicKey: key.publicKey,
    apiPrivateKey: key.privateKey,
  };
  writeSecretFile(input.dataDir, DAEMON_SIGNER_FILE, `${JSON.stringify(creds, null, 2)}\n`);
  input.logger.info({ userId, policy: DAEMON_SIGNER_POLICY_NAME }, 'created the daemon signer user');
  return creds;
}
