/**
 * Sign-up and account lookup on the auth proxy (seed 4.2; turnkey-api.md 10): `/v1/signup` and
 * `/v1/signup_v2` create the end user's sub-organization with `create_sub_organization` (V8) in the
 * configuration's organization, stamped with the proxy key; `/v1/account` finds the user's
 * sub-organization with the `list_suborgs` query. Both spellings of each field are accepted and
 * normalized here, at the edge: the seed's `wallet {path, curve: CURVE_TYPE_*}` and `client_signature`,
 * and current clients' `v1WalletParams` wallet and `clientSignature` object.
 *
 * A sign-up that names an email or phone number must carry a verification token for it (the
 * service checks that the token's contact is the root user's, its client signature, and uses the
 * token once): otherwise anyone could register someone else's address, and that address's OTP
 * logins would then land in the registrant's sub-organization.
 */
import { randomUUID } from 'node:crypto';
import { CountersignError, invalid } from '../shared/errors.js';
import type { Body, Call } from './proxy.js';

function optString(b: Body, ...names: string[]): string | undefined {
  for (const n of names) {
    const v = b[n];
    if (v === undefined || v === null || v === '') continue;
    if (typeof v !== 'string') throw invalid(n, 'must be a string');
    return v;
  }
  return undefined;
}

function array(b: Body, name: string): unknown[] {
  const v = b[name];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw invalid(name, 'must be an array');
  return v;
}

/** The seed's curve spelling (CURVE_TYPE_SECP256K1) and the API's (CURVE_SECP256K1), as the API's. */
function seedCurve(v: unknown): { curve: string; addressFormat: string } {
  switch (v) {
    case 'CURVE_TYPE_SECP256K1':
    case 'CURVE_SECP256K1':
      return { curve: 'CURVE_SECP256K1', addressFormat: 'ADDRESS_FORMAT_ETHEREUM' };
    case 'CURVE_TYPE_ED25519':
    case 'CURVE_ED25519':
      return { curve: 'CURVE_ED25519', addressFormat: 'ADDRESS_FORMAT_SOLANA' };
    default:
      throw invalid('wallet.curve', 'must be CURVE_TYPE_SECP256K1 or CURVE_TYPE_ED25519 (or CURVE_*)');
  }
}

/** `wallet` as create_sub_organization takes it: v1WalletParams, or the seed's `{path, curve}`. */
function walletParams(v: unknown): Body | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw invalid('wallet', 'must be an object');
  const w = v as Body;
  if (w.accounts !== undefined || w.walletName !== undefined) return w;
  if (typeof w.path !== 'string' || w.path === '')
    throw invalid(
      'wallet',
      'must be {walletName, accounts[], mnemonicLength?} or the seed form {path, curve}',
    );
  const { curve, addressFormat } = seedCurve(w.curve);
  return {
    walletName: 'Default Wallet',
    accounts: [{ curve, pathFormat: 'PATH_FORMAT_BIP32', path: w.path, addressFormat }],
  };
}

async function signup(c: Call): Promise<Body> {
  const b = c.body;
  const userEmail = optString(b, 'userEmail', 'user_email');
  const userPhoneNumber = optString(b, 'userPhoneNumber', 'user_phone_number');
  const verificationToken = optString(b, 'verificationToken', 'verification_token');
  const contact = userEmail ?? userPhoneNumber;
  // Per contact as otp_init (its own counter); per client address is counted by the listener.
  if (contact !== undefined)
    c.limit(`signup-contact:${contact.toLowerCase()}`, c.settings.otpInitPerMinutePerContact);
  if (contact !== undefined && verificationToken === undefined)
    throw new CountersignError(
      'FIELD_MISSING',
      `verificationToken: is required when signing up with ${userEmail === undefined ? 'a phone number' : 'an email'} (run otp_init and otp_verify first)`,
      { field: 'verificationToken' },
    );
  const clientSignature = b.clientSignature ?? b.client_signature;
  if (clientSignature !== undefined && (typeof clientSignature !== 'object' || clientSignature === null))
    throw invalid('clientSignature', 'must be an object {publicKey, scheme, message, signature}');
  const userName = optString(b, 'userName', 'user_name') ?? contact ?? `user-${randomUUID()}`;
  const wallet = walletParams(b.wallet);
  const r = await c.forward('create_sub_organization', 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8', {
    subOrganizationName: optString(b, 'organizationName', 'organization_name') ?? `sub-org-${randomUUID()}`,
    rootUsers: [
      {
        userName,
        ...(userEmail === undefined ? {} : { userEmail }),
        ...(userPhoneNumber === undefined ? {} : { userPhoneNumber }),
        apiKeys: array(b, 'apiKeys'),
        authenticators: array(b, 'authenticators'),
        oauthProviders: array(b, 'oauthProviders'),
      },
    ],
    rootQuorumThreshold: 1,
    ...(wallet === undefined ? {} : { wallet }),
    ...(verificationToken === undefined ? {} : { verificationToken }),
    ...(clientSignature === undefined ? {} : { clientSignature }),
    // The sign-up's app proofs (the wallet's derived addresses) go back to the client unverified.
    generateAppProofs: true,
  });
  const res = (r.createSubOrganizationResultV8 ?? {}) as {
    subOrganizationId?: string;
    rootUserIds?: string[];
    wallet?: { walletId: string; addresses: string[] };
  };
  return {
    organizationId: res.subOrganizationId,
    userId: res.rootUserIds?.[0],
    ...(res.wallet === undefined ? {} : { wallet: res.wallet }),
    ...(Array.isArray(r.appProofs) && r.appProofs.length > 0 ? { appProofs: r.appProofs } : {}),
  };
}

const FILTER_TYPES = [
  'CREDENTIAL_ID',
  'NAME',
  'USERNAME',
  'EMAIL',
  'PHONE_NUMBER',
  'OIDC_TOKEN',
  'PUBLIC_KEY',
] as const;

async function account(c: Call): Promise<Body> {
  const filterType = optString(c.body, 'filterType', 'filter_type');
  if (filterType === undefined)
    throw new CountersignError('FIELD_MISSING', 'filterType: is required', { field: 'filterType' });
  if (!(FILTER_TYPES as readonly string[]).includes(filterType))
    throw invalid('filterType', `must be one of ${FILTER_TYPES.join(', ')}`);
  // An OIDC lookup may carry the token in `oidcToken` instead of `filterValue`.
  const filterValue =
    optString(c.body, 'filterValue', 'filter_value') ??
    (filterType === 'OIDC_TOKEN' ? optString(c.body, 'oidcToken') : undefined);
  if (filterValue === undefined)
    throw new CountersignError('FIELD_MISSING', 'filterValue: is required', { field: 'filterValue' });
  const r = await c.query('list_suborgs', { filterType, filterValue, paginationOptions: { limit: '1' } });
  const ids = Array.isArray(r.organizationIds) ? (r.organizationIds as unknown[]) : [];
  return typeof ids[0] === 'string' ? { organizationId: ids[0] } : {};
}

/** The proxy endpoints of this file, by path. */
export const SIGNUP_ROUTES: Record<string, (c: Call) => Promise<Body>> = {
  '/v1/signup': signup,
  '/v1/signup_v2': signup,
  '/v1/account': account,
};
