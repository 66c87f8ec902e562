/**
 * @turnkey/core 2.7.1 (unmodified) pointed at our auth proxy and public API, in Node (issue 13):
 * its HTTP client (TurnkeySDKClientBase, the one TurnkeyClient uses) sends email OTP init and
 * verify, account lookup and sign-up to the proxy exactly as TurnkeyClient.completeOtp does (with
 * core's own getClientSignatureMessageForSignup), then logs in the way core ≥ 2.7 does: stamp_login
 * stamped by its AttestedStamper (X-Stamp-Attested carrying the verification token). The session key
 * then stamps a sign_transaction through core's client, and viem recovers the wallet's address.
 *
 * What stands in for the browser: TurnkeyClient itself keeps keys in IndexedDB and sessions in
 * localStorage, which Node lacks; the key holder below (Turnkey's @turnkey/api-key-stamper behind
 * the same sign/stamp interface core's IndexedDB stamper has) replaces that storage only.
 *
 * Why not TurnkeyClient.completeOtp in Chromium: its verifyOtp calls @turnkey/crypto's
 * encryptOtpCodeToBundle without a signer override, so it only accepts OTP target bundles signed by
 * Turnkey's production key (turnkey-api.md 9.5); no self-hosted server can pass that unmodified. The
 * OTP bundle is encrypted here as verifyOtp does, with our published signer key as the override.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyStamper, SignatureFormat } from '@turnkey/api-key-stamper';
import { getClientSignatureMessageForSignup, StamperType } from '@turnkey/core';
import { TurnkeySDKClientBase } from '@turnkey/core/dist/__generated__/sdk-client-base.js';
import { AttestedScheme, AttestedStamper } from '@turnkey/core/dist/__stampers__/attested/base.js';
import { encryptOtpCodeToBundle, verifySessionJwtSignature } from '@turnkey/crypto';
import { parseTransaction, recoverTransactionAddress, serializeTransaction, type Hex } from 'viem';
import { startSmtpSink, type SmtpSink } from './helpers/smtp.js';
import { startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { newApiKey } from './helpers/api-key.js';
import type { AuthProxyListener } from '../src/proxy/proxy.js';
import { enableAuthProxy, startProxyOver } from './helpers/proxy.js';

/** Keys by public key, with one active for stamping: the part of core's IndexedDB stamper used here. */
class MemoryKeyStamper {
  readonly #keys = new Map<string, ApiKeyStamper>();
  active: string | undefined;
  create(): string {
    const k = newApiKey();
    this.#keys.set(k.apiPublicKey, new ApiKeyStamper({ ...k, runtimeOverride: 'node' }));
    return k.apiPublicKey;
  }
  #get(pub: string | undefined): ApiKeyStamper {
    const s = pub === undefined ? undefined : this.#keys.get(pub);
    if (s === undefined) throw new Error(`no key ${pub ?? '(none active)'}`);
    return s;
  }
  stamp(payload: string) {
    return this.#get(this.active).stamp(payload);
  }
  sign(payload: string, format: SignatureFormat = SignatureFormat.Der, pub?: string) {
    return this.#get(pub ?? this.active).sign(payload, format);
  }
}

let h: EmbeddedHarness;
let smtp: SmtpSink;
let proxy: AuthProxyListener;
let keys: Record<string, string>;
let parent: string;
let configId: string;

beforeAll(async () => {
  smtp = await startSmtpSink();
  h = await startEmbedded({
    allowPrivateNetwork: true,
    delivery: { smtpUrl: `smtp://127.0.0.1:${smtp.port}`, smtpFrom: 'noreply@countersign.test' },
  });
  parent = h.service.credentials.organizationId;
  keys = (await (await fetch(`${h.baseUrl}/public/v1/discovery/keys`)).json()) as Record<string, string>;
  configId = await enableAuthProxy(h, parent, { appName: 'Core Demo' });
  proxy = await startProxyOver(h.dataDir, h.service);
});

afterAll(async () => {
  await proxy?.close();
  await h?.close();
  await smtp?.close();
});

function coreClient(stamper: MemoryKeyStamper, attested: AttestedStamper) {
  return new TurnkeySDKClientBase({
    apiBaseUrl: h.baseUrl,
    authProxyUrl: `http://${proxy.address}`,
    authProxyConfigId: configId,
    organizationId: parent,
    apiKeyStamper: stamper,
    attestedStamper: attested,
  } as unknown as ConstructorParameters<typeof TurnkeySDKClientBase>[0]);
}

/** proxyInitOtpV2 → the mail → proxyVerifyOtpV2, as core's initOtp/verifyOtp do. */
async function otp(core: TurnkeySDKClientBase, contact: string, publicKey: string): Promise<string> {
  const init = await core.proxyInitOtpV2({ otpType: 'OTP_TYPE_EMAIL', contact });
  const code = /code is ([0-9A-Z]+)/.exec(await smtp.take(contact))?.[1] as string;
  const encryptedOtpBundle = await encryptOtpCodeToBundle(
    code,
    init.otpEncryptionTargetBundle,
    publicKey,
    keys.signerPublicKey,
  );
  return (await core.proxyVerifyOtpV2({ otpId: init.otpId, encryptedOtpBundle })).verificationToken;
}

describe('@turnkey/core against the auth proxy', () => {
  it('email OTP sign-up, login and account lookup; the session stamps a sign_transaction viem verifies', async () => {
    const stamper = new MemoryKeyStamper();
    const attested = new AttestedStamper(stamper as never);
    const core = coreClient(stamper, attested);
    const email = 'core-user@example.com';

    // Sign-up (completeOtp with no account yet): OTP, lookup → {}, signup_v2 with the token's signature.
    const signupKey = stamper.create();
    const token = await otp(core, email, signupKey);
    expect(
      await core.proxyGetAccount({ filterType: 'EMAIL', filterValue: email, verificationToken: token }),
    ).toEqual({});
    const body = {
      userName: email,
      userEmail: email,
      organizationName: `sub-org-${Date.now()}`,
      verificationToken: token,
      apiKeys: [],
      authenticators: [],
      oauthProviders: [],
      wallet: {
        walletName: 'Default Wallet',
        accounts: [
          {
            curve: 'CURVE_SECP256K1',
            pathFormat: 'PATH_FORMAT_BIP32',
            path: "m/44'/60'/0'/0/0",
            addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
          },
        ],
      },
    };
    const { message, publicKey } = getClientSignatureMessageForSignup({
      verificationToken: token,
      email,
      apiKeys: [],
      authenticators: [],
      oauthProviders: [],
    });
    expect(publicKey).toBe(signupKey);
    const signup = await core.proxySignupV2({
      ...body,
      clientSignature: {
        message,
        publicKey,
        scheme: 'CLIENT_SIGNATURE_SCHEME_API_P256',
        signature: await stamper.sign(message, SignatureFormat.Raw, publicKey),
      },
    } as never);
    const subOrg = signup.organizationId;
    expect(subOrg).toMatch(/^[0-9a-f-]{36}$/);
    const address = (signup as { wallet?: { addresses: string[] } }).wallet?.addresses[0] as Hex;
    expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/);

    // loginWithOtp: stamp_login stamped with X-Stamp-Attested, the token's key as the session key.
    attested.configure({
      attestedIdentity: token,
      publicKey: signupKey,
      scheme: AttestedScheme.P256_VERIFICATION_TOKEN,
    });
    const login = await core.stampLogin(
      { publicKey: signupKey, expirationSeconds: '900', invalidateExisting: false },
      StamperType.Attested,
    );
    expect(await verifySessionJwtSignature(login.session, keys.notarizerPublicKey)).toBe(true);
    const claims = JSON.parse(Buffer.from(login.session.split('.')[1] as string, 'base64url').toString());
    expect(claims).toMatchObject({ organization_id: subOrg, public_key: signupKey });

    // Account lookup now finds the sub-organization.
    expect(
      await core.proxyGetAccount({ filterType: 'EMAIL', filterValue: email, verificationToken: token }),
    ).toEqual({ organizationId: subOrg });

    // The session key stamps sign_transaction through core's client; viem recovers the signer.
    stamper.active = signupKey;
    const unsigned = serializeTransaction({
      type: 'eip1559',
      chainId: 1,
      nonce: 0,
      to: '0x000000000000000000000000000000000000dEaD',
      value: 1n,
      gas: 21000n,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    });
    const signed = await core.signTransaction({
      organizationId: subOrg,
      signWith: address,
      unsignedTransaction: unsigned.slice(2),
      type: 'TRANSACTION_TYPE_ETHEREUM',
    });
    const tx = `0x${signed.signedTransaction.replace(/^0x/, '')}` as Hex;
    expect(parseTransaction(tx)).toMatchObject({
      to: '0x000000000000000000000000000000000000dead',
      value: 1n,
    });
    expect((await recoverTransactionAddress({ serializedTransaction: tx as never })).toLowerCase()).toBe(
      address.toLowerCase(),
    );

    // Logging in again later: a fresh OTP for the existing account, a new key, stamp_login attested.
    const loginKey = stamper.create();
    const token2 = await otp(core, email, loginKey);
    attested.configure({
      attestedIdentity: token2,
      publicKey: loginKey,
      scheme: AttestedScheme.P256_VERIFICATION_TOKEN,
    });
    const again = await core.stampLogin(
      { publicKey: loginKey, expirationSeconds: '900' },
      StamperType.Attested,
    );
    expect(
      JSON.parse(Buffer.from(again.session.split('.')[1] as string, 'base64url').toString()),
    ).toMatchObject({
      organization_id: subOrg,
      public_key: loginKey,
    });
  });

  it('refuses an attested stamp by another key than the token’s, a session key other than the token’s, and anything but stamp_login; writes no key', async () => {
    const stamper = new MemoryKeyStamper();
    const attested = new AttestedStamper(stamper as never);
    const core = coreClient(stamper, attested);
    const [subOrg] = await h.service.store.listSubOrganizationIds(
      parent,
      { type: 'EMAIL', value: 'core-user@example.com' },
      { limit: 1 },
    );
    const [user] = await h.service.store.listUsers(subOrg as string);
    const sessionKeys = async () => (await h.service.store.listApiKeys(user!.id)).length;
    const keysBefore = await sessionKeys();
    expect(keysBefore).toBeGreaterThan(0);
    const tokenKey = stamper.create();
    const token = await otp(core, 'core-user@example.com', tokenKey);
    const other = stamper.create();
    attested.configure({
      attestedIdentity: token,
      publicKey: other,
      scheme: AttestedScheme.P256_VERIFICATION_TOKEN,
    });
    await expect(
      core.stampLogin({ publicKey: other, expirationSeconds: '900' }, StamperType.Attested),
    ).rejects.toThrow(/public_key is not the stamp's publicKey/);
    attested.configure({
      attestedIdentity: token,
      publicKey: tokenKey,
      scheme: AttestedScheme.P256_VERIFICATION_TOKEN,
    });
    await expect(
      core.stampLogin({ publicKey: other, expirationSeconds: '900' }, StamperType.Attested),
    ).rejects.toThrow(/parameters\.publicKey/);
    await expect(
      core.createWallet({ walletName: 'nope', accounts: [] }, StamperType.Attested),
    ).rejects.toThrow(/stamp_login only/);
    expect(await sessionKeys()).toBe(keysBefore);
  });
});
