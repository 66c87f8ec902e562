/**
 * Users inserted straight through the store's write(), the transaction path activities use, for
 * tests that need more users than the bootstrap root (there is no create_users activity yet).
 */
import { randomUUID } from 'node:crypto';
import type { Store } from '../../src/service/store/types.js';
import { newApiKey, type ApiKeyPair } from './api-key.js';

export interface InsertUserWithApiKeyOptions {
  readonly organizationId: string;
  readonly name: string;
  /** Non-root unless asked, so that policies (not the root quorum) decide for the user. */
  readonly isRoot?: boolean;
}

/** Inserts a user with one fresh P-256 API key named `<name> key`, in one write. */
export async function insertUserWithApiKey(
  store: Pick<Store, 'write'>,
  opts: InsertUserWithApiKeyOptions,
): Promise<{ userId: string; key: ApiKeyPair }> {
  const userId = randomUUID();
  const key = newApiKey();
  const now = Date.now();
  await store.write(async (tx) => {
    await tx.insertUser({
      id: userId,
      organizationId: opts.organizationId,
      name: opts.name,
      email: null,
      phoneNumber: null,
      isRoot: opts.isRoot ?? false,
      createdAtMs: now,
      updatedAtMs: now,
    });
    await tx.insertApiKey({
      id: randomUUID(),
      userId,
      organizationId: opts.organizationId,
      name: `${opts.name} key`,
      publicKey: key.apiPublicKey,
      curve: 'API_KEY_CURVE_P256',
      expiresAtMs: null,
      createdAtMs: now,
    });
  });
  return { userId, key };
}
