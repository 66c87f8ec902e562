/**
 * `countersign console invite --user-name NAME [--root]`: creates the user when missing (through
 * activities stamped by the data dir's root key, so the policy engine and the activity log see it),
 * gives it a 15-minute invite API key, and returns the one-time link. See ./invite.ts.
 */
import { p256 } from '@noble/curves/nist.js';
import { bytesToHex } from '../../shared/encoding.js';
import { CountersignError } from '../../shared/errors.js';
import { ApiKeyStamper } from '../../client/stamper.js';
import { PublicApiClient, type Activity } from '../../client/client.js';
import { inProcessTransport } from '../../client/in-process-transport.js';
import type { EmbeddedService } from '../embedded.js';
import type { ListenAddress } from '../../config.js';
import { INVITE_KEY_PREFIX, INVITE_LIFETIME_SECONDS } from './invite.js';

export interface InviteOptions {
  readonly userName: string;
  readonly root: boolean;
  readonly consoleOrigin: string | undefined;
  readonly apiListen: ListenAddress;
}

/** Where the console is opened: the configured origin, else localhost (WebAuthn refuses IPs). */
export function consoleBase(o: Pick<InviteOptions, 'consoleOrigin' | 'apiListen'>): string {
  if (o.consoleOrigin !== undefined) return o.consoleOrigin;
  const h = o.apiListen.host;
  const loopbackOrAny =
    h === '0.0.0.0' || h === '::' || h === '::1' || h.startsWith('127.') || h === 'localhost';
  const host = loopbackOrAny || /^[0-9.]+$/.test(h) || h.includes(':') ? 'localhost' : h;
  return `http://${host}:${o.apiListen.port}`;
}

function completed(a: Activity, what: string): Activity {
  if (a.status !== 'ACTIVITY_STATUS_COMPLETED')
    throw new CountersignError(
      'REQUEST_NOT_AUTHORIZED',
      `${what} did not complete (${a.status}${a.failure === undefined ? '' : `: ${a.failure.message}`}); approve it or invite an existing user`,
    );
  return a;
}

/** Returns the invite link (`<origin>/console/invite#<organizationId>.<invite key>`). */
export async function createInvite(service: EmbeddedService, o: InviteOptions): Promise<string> {
  const c = service.credentials;
  const client = new PublicApiClient({
    transport: inProcessTransport(service.handler),
    stamper: new ApiKeyStamper(c),
    organizationId: c.organizationId,
  });
  const submit = async (path: string, type: string, parameters: Record<string, unknown>) =>
    completed(await client.submit(path, client.buildActivityBody({ type, parameters })), type);
  const secret = p256.utils.randomSecretKey();
  const apiKey = {
    apiKeyName: `${INVITE_KEY_PREFIX}${new Date().toISOString()}`,
    publicKey: bytesToHex(p256.getPublicKey(secret, true)),
    curveType: 'API_KEY_CURVE_P256',
    expirationSeconds: String(INVITE_LIFETIME_SECONDS),
  };
  const { users } = await client.query<{ users: { userId: string; userName: string }[] }>('list_users', {});
  const existing = users.find((u) => u.userName === o.userName);
  if (existing !== undefined) {
    await submit('create_api_keys', 'ACTIVITY_TYPE_CREATE_API_KEYS_V2', {
      userId: existing.userId,
      apiKeys: [apiKey],
    });
  } else {
    const a = await submit('create_users', 'ACTIVITY_TYPE_CREATE_USERS_V3', {
      users: [
        { userName: o.userName, apiKeys: [apiKey], authenticators: [], oauthProviders: [], userTags: [] },
      ],
    });
    const userId = ((a.result.createUsersResult as { userIds: string[] }).userIds as string[])[0] as string;
    if (o.root) {
      const { organizationData } = await client.query<{
        organizationData: { rootQuorum: { threshold: number; userIds: string[] } };
      }>('get_organization', {});
      await submit('update_root_quorum', 'ACTIVITY_TYPE_UPDATE_ROOT_QUORUM', {
        threshold: organizationData.rootQuorum.threshold,
        userIds: [...organizationData.rootQuorum.userIds, userId],
      });
    }
  }
  return `${consoleBase(o)}/console/invite#${c.organizationId}.${bytesToHex(secret)}`;
}
