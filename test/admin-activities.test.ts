/**
 * Everyday administration through @turnkey/sdk-server's own methods: each activity changes what a
 * query then reads back, a bad request names its field and writes nothing, and the root-quorum-only
 * activities stay out of a policy's reach.
 */
import { Turnkey, TurnkeyRequestError } from '@turnkey/sdk-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newApiKey, type ApiKeyPair } from './helpers/api-key.js';
import { startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { serviceVerificationToken } from './helpers/verification.js';

type Api = ReturnType<Turnkey['apiClient']>;

const ETH_ACCOUNT = {
  curve: 'CURVE_SECP256K1',
  pathFormat: 'PATH_FORMAT_BIP32',
  path: "m/44'/60'/0'/0/0",
  addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
} as const;

async function refusal(p: Promise<unknown>): Promise<TurnkeyRequestError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof TurnkeyRequestError) return e;
    throw e;
  }
  throw new Error('expected the request to be refused');
}

describe('administration activities and queries', () => {
  let h: EmbeddedHarness;
  let org: string;
  let api: Api;
  const clientOf = (key: ApiKeyPair, organizationId = org): Api =>
    new Turnkey({
      apiBaseUrl: h.baseUrl,
      apiPublicKey: key.apiPublicKey,
      apiPrivateKey: key.apiPrivateKey,
      defaultOrganizationId: organizationId,
    }).apiClient();
  let rootUserId: string;
  let bob: { id: string; key: ApiKeyPair };

  beforeAll(async () => {
    h = await startEmbedded();
    org = h.service.credentials.organizationId;
    api = clientOf({
      apiPublicKey: h.service.credentials.apiPublicKey,
      apiPrivateKey: h.service.credentials.apiPrivateKey,
    });
    rootUserId = (await api.getWhoami({})).userId;
    const key = newApiKey();
    const created = await api.createUsers({
      users: [
        {
          userName: 'bob',
          userEmail: 'bob@example.com',
          apiKeys: [{ apiKeyName: 'bob key', publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }],
          authenticators: [],
          oauthProviders: [],
          userTags: [],
        },
      ],
    });
    bob = { id: String(created.userIds[0]), key };
  });

  afterAll(() => h?.close());

  it('update_user_name and update_user_phone_number change the user as get_user reads it', async () => {
    expect(await api.updateUserName({ userId: bob.id, userName: 'Robert' })).toMatchObject({
      userId: bob.id,
    });
    expect((await api.getUser({ userId: bob.id })).user.userName).toBe('Robert');

    await api.updateUserPhoneNumber({ userId: bob.id, userPhoneNumber: '+14155550100' });
    expect((await api.getUser({ userId: bob.id })).user.userPhoneNumber).toBe('+14155550100');
    // An empty number removes it.
    await api.updateUserPhoneNumber({ userId: bob.id, userPhoneNumber: '' });
    expect((await api.getUser({ userId: bob.id })).user.userPhoneNumber).toBeFalsy();

    const bad = await refusal(api.updateUserPhoneNumber({ userId: bob.id, userPhoneNumber: '4155550100' }));
    expect(bad.message).toMatch(/parameters\.userPhoneNumber: must be a phone number in E\.164/);
    const blank = await refusal(api.updateUserName({ userId: bob.id, userName: ' ' }));
    expect(blank.message).toMatch(/parameters\.userName: must not be empty/);
    expect((await api.getUser({ userId: bob.id })).user.userName).toBe('Robert');
  });

  it('update_wallet renames, refusing a name another wallet has', async () => {
    const a = await api.createWallet({ walletName: 'alpha', accounts: [ETH_ACCOUNT] });
    await api.createWallet({ walletName: 'beta', accounts: [ETH_ACCOUNT] });
    expect(await api.updateWallet({ walletId: a.walletId, walletName: 'gamma' })).toMatchObject({
      walletId: a.walletId,
    });
    expect((await api.getWallet({ walletId: a.walletId })).wallet.walletName).toBe('gamma');
    const taken = await refusal(api.updateWallet({ walletId: a.walletId, walletName: 'beta' }));
    expect(taken.message).toMatch(/parameters\.walletName: a wallet with this name already exists/);
    const unknown = await refusal(
      api.updateWallet({ walletId: '00000000-0000-4000-8000-000000000000', walletName: 'x' }),
    );
    expect(unknown.message).toMatch(/parameters\.walletId/);
    expect((await api.getWallet({ walletId: a.walletId })).wallet.walletName).toBe('gamma');
  });

  it('update_user_tag renames and moves users; delete_user_tags removes tags from every user', async () => {
    const { userTagId } = await api.createUserTag({ userTagName: 'ops', userIds: [bob.id] });
    await api.updateUserTag({
      userTagId,
      newUserTagName: 'operators',
      addUserIds: [rootUserId],
      removeUserIds: [bob.id],
    });
    const tags = (await api.listUserTags({})).userTags;
    expect(tags.find((t) => t.tagId === userTagId)?.tagName).toBe('operators');
    expect((await api.getUser({ userId: rootUserId })).user.userTags).toContain(userTagId);
    expect((await api.getUser({ userId: bob.id })).user.userTags).not.toContain(userTagId);

    const both = await refusal(
      api.updateUserTag({ userTagId, addUserIds: [bob.id], removeUserIds: [bob.id] }),
    );
    expect(both.message).toMatch(/parameters\.removeUserIds\.0/);

    const deleted = await api.deleteUserTags({ userTagIds: [userTagId] });
    expect(deleted).toMatchObject({ userTagIds: [userTagId], userIds: [rootUserId] });
    expect((await api.listUserTags({})).userTags.map((t) => t.tagId)).not.toContain(userTagId);
    expect((await api.getUser({ userId: rootUserId })).user.userTags).not.toContain(userTagId);
    const again = await refusal(api.deleteUserTags({ userTagIds: [userTagId] }));
    expect(again.message).toMatch(/parameters\.userTagIds\.0: .*not found|user tag/);
  });

  it('delete_policies removes every policy named, or none when one is unknown', async () => {
    const one = await api.createPolicy({
      policyName: 'p1',
      effect: 'EFFECT_DENY',
      condition: 'false',
      notes: '',
    });
    const two = await api.createPolicy({
      policyName: 'p2',
      effect: 'EFFECT_DENY',
      condition: 'false',
      notes: '',
    });
    const unknown = '00000000-0000-4000-8000-000000000001';
    const bad = await refusal(api.deletePolicies({ policyIds: [one.policyId, unknown] }));
    expect(bad.message).toMatch(/parameters\.policyIds\.1/);
    expect((await api.getPolicies({})).policies.map((p) => p.policyId)).toEqual(
      expect.arrayContaining([one.policyId, two.policyId]),
    );
    expect(await api.deletePolicies({ policyIds: [one.policyId, two.policyId] })).toMatchObject({
      policyIds: [one.policyId, two.policyId],
    });
    const left = (await api.getPolicies({})).policies.map((p) => p.policyId);
    expect(left).not.toContain(one.policyId);
    expect(left).not.toContain(two.policyId);
  });

  it('delete_wallet_accounts needs an export or deleteWithoutExport', async () => {
    const w = await api.createWallet({
      walletName: 'accounts to delete',
      accounts: [ETH_ACCOUNT, { ...ETH_ACCOUNT, path: "m/44'/60'/0'/0/1" }],
    });
    const accounts = (await api.getWalletAccounts({ walletId: w.walletId })).accounts;
    expect(accounts).toHaveLength(2);
    const target = accounts[1]!;
    const refused = await refusal(api.deleteWalletAccounts({ walletAccountIds: [target.walletAccountId] }));
    expect(refused.message).toMatch(/parameters\.walletAccountIds\.0: wallet account has not been exported/);
    expect((await api.getWalletAccounts({ walletId: w.walletId })).accounts).toHaveLength(2);
    await api.deleteWalletAccounts({ walletAccountIds: [target.walletAccountId], deleteWithoutExport: true });
    const left = (await api.getWalletAccounts({ walletId: w.walletId })).accounts;
    expect(left.map((a) => a.walletAccountId)).toEqual([accounts[0]!.walletAccountId]);
    // The deleted address no longer signs.
    const gone = await refusal(
      api.signRawPayload({
        signWith: target.address,
        payload: '00'.repeat(32),
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      }),
    );
    expect(gone.message).toMatch(/signWith/);
  });

  it('create_private_key_tag tags keys as list_private_key_tags and get_private_key read them; delete_private_keys removes keys', async () => {
    const made = await api.createPrivateKeys({
      privateKeys: [
        {
          privateKeyName: 'k1',
          curve: 'CURVE_SECP256K1',
          addressFormats: ['ADDRESS_FORMAT_ETHEREUM'],
          privateKeyTags: [],
        },
        { privateKeyName: 'k2', curve: 'CURVE_ED25519', addressFormats: [], privateKeyTags: [] },
      ],
    });
    const [k1, k2] = made.privateKeys.map((k) => k.privateKeyId) as [string, string];
    const tag = await api.createPrivateKeyTag({ privateKeyTagName: 'hot', privateKeyIds: [k1] });
    expect(tag.privateKeyIds).toEqual([k1]);
    const listed = (await api.listPrivateKeyTags({})).privateKeyTags;
    expect(listed).toEqual([
      expect.objectContaining({
        tagId: tag.privateKeyTagId,
        tagName: 'hot',
        tagType: 'TAG_TYPE_PRIVATE_KEY',
      }),
    ]);
    expect((await api.getPrivateKey({ privateKeyId: k1 })).privateKey.privateKeyTags).toContain(
      tag.privateKeyTagId,
    );
    const dup = await refusal(api.createPrivateKeyTag({ privateKeyTagName: 'hot', privateKeyIds: [] }));
    expect(dup.message).toMatch(
      /parameters\.privateKeyTagName: a private key tag with this name already exists/,
    );

    const refused = await refusal(api.deletePrivateKeys({ privateKeyIds: [k1, k2] }));
    expect(refused.message).toMatch(/parameters\.privateKeyIds\.0: private key has not been exported/);
    expect((await api.getPrivateKeys({})).privateKeys.map((k) => k.privateKeyId)).toEqual(
      expect.arrayContaining([k1, k2]),
    );
    expect(await api.deletePrivateKeys({ privateKeyIds: [k1, k2], deleteWithoutExport: true })).toMatchObject(
      {
        privateKeyIds: [k1, k2],
      },
    );
    const left = (await api.getPrivateKeys({})).privateKeys.map((k) => k.privateKeyId);
    expect(left).not.toContain(k1);
    expect(left).not.toContain(k2);
  });

  it('update_private_key_tag renames and moves keys; delete_private_key_tags takes the tag off every key', async () => {
    const made = await api.createPrivateKeys({
      privateKeys: ['t1', 't2'].map((n) => ({
        privateKeyName: n,
        curve: 'CURVE_SECP256K1' as const,
        addressFormats: [],
        privateKeyTags: [],
      })),
    });
    const [k1, k2] = made.privateKeys.map((k) => k.privateKeyId) as [string, string];
    const { privateKeyTagId } = await api.createPrivateKeyTag({
      privateKeyTagName: 'cold',
      privateKeyIds: [k1],
    });
    await api.updatePrivateKeyTag({
      privateKeyTagId,
      newPrivateKeyTagName: 'frozen',
      addPrivateKeyIds: [k2],
      removePrivateKeyIds: [k1],
    });
    const tagsOf = async (id: string) =>
      (await api.getPrivateKey({ privateKeyId: id })).privateKey.privateKeyTags;
    expect(await tagsOf(k1)).not.toContain(privateKeyTagId);
    expect(await tagsOf(k2)).toContain(privateKeyTagId);
    expect(
      (await api.listPrivateKeyTags({})).privateKeyTags.find((t) => t.tagId === privateKeyTagId)?.tagName,
    ).toBe('frozen');
    const unknownKey = await refusal(
      api.updatePrivateKeyTag({
        privateKeyTagId,
        addPrivateKeyIds: ['00000000-0000-4000-8000-000000000003'],
        removePrivateKeyIds: [],
      }),
    );
    expect(unknownKey.message).toMatch(/parameters\.addPrivateKeyIds\.0/);

    expect(await api.deletePrivateKeyTags({ privateKeyTagIds: [privateKeyTagId] })).toMatchObject({
      privateKeyTagIds: [privateKeyTagId],
      privateKeyIds: [k2],
    });
    expect(await tagsOf(k2)).not.toContain(privateKeyTagId);
    expect((await api.listPrivateKeyTags({})).privateKeyTags.map((t) => t.tagId)).not.toContain(
      privateKeyTagId,
    );
  });

  it('get_organization_configs reads the features and the root quorum', async () => {
    await api.setOrganizationFeature({
      name: 'FEATURE_NAME_WEBAUTHN_ORIGINS',
      value: 'https://app.example.com',
    });
    const { configs } = await api.getOrganizationConfigs({ organizationId: org });
    expect(configs.features).toEqual(
      expect.arrayContaining([{ name: 'FEATURE_NAME_WEBAUTHN_ORIGINS', value: 'https://app.example.com' }]),
    );
    expect(configs.quorum).toEqual({ threshold: 1, userIds: [rootUserId] });
  });

  it('update_root_quorum and update_organization_name are for the root quorum alone', async () => {
    // A policy that allows bob everything still cannot grant these.
    await api.createPolicy({
      policyName: 'bob may do anything',
      effect: 'EFFECT_ALLOW',
      consensus: `approvers.any(user, user.id == '${bob.id}')`,
      condition: 'true',
      notes: '',
    });
    const asBob = clientOf(bob.key);
    const r = await refusal(asBob.updateOrganizationName({ organizationName: 'Bob Inc' }));
    expect(r.code).toBe(7); // PERMISSION_DENIED
    const q = await refusal(asBob.updateRootQuorum({ threshold: 1, userIds: [bob.id] }));
    expect(q.code).toBe(7);
    expect((await api.getWhoami({})).organizationName).not.toBe('Bob Inc');

    expect(await api.updateOrganizationName({ organizationName: 'Renamed Org' })).toMatchObject({
      organizationId: org,
      organizationName: 'Renamed Org',
    });
    expect((await api.getWhoami({})).organizationName).toBe('Renamed Org');

    const over = await refusal(api.updateRootQuorum({ threshold: 3, userIds: [rootUserId, bob.id] }));
    expect(over.message).toMatch(/parameters\.threshold: must be between 1 and the number of userIds \(2\)/);
    const stranger = await refusal(
      api.updateRootQuorum({ threshold: 1, userIds: [rootUserId, '00000000-0000-4000-8000-000000000002'] }),
    );
    expect(stranger.message).toMatch(/parameters\.userIds\.1/);
    expect((await api.getOrganizationConfigs({ organizationId: org })).configs.quorum).toEqual({
      threshold: 1,
      userIds: [rootUserId],
    });

    await api.updateRootQuorum({ threshold: 1, userIds: [rootUserId, bob.id] });
    const quorum = (await api.getOrganizationConfigs({ organizationId: org })).configs.quorum;
    expect(quorum?.threshold).toBe(1);
    expect([...(quorum?.userIds ?? [])].sort()).toEqual([rootUserId, bob.id].sort());
    // Now a root user, bob renames the organization himself.
    await asBob.updateOrganizationName({ organizationName: 'Bob Inc' });
    expect((await api.getWhoami({})).organizationName).toBe('Bob Inc');
  });

  describe('sub-organizations', () => {
    const subOrg = async (
      name: string,
      email: string,
    ): Promise<{ id: string; key: ApiKeyPair; userId: string }> => {
      const key = newApiKey();
      const res = await api.createSubOrganization({
        subOrganizationName: name,
        rootQuorumThreshold: 1,
        rootUsers: [
          {
            userName: `${name} root`,
            userEmail: email,
            apiKeys: [{ apiKeyName: 'k', publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }],
            authenticators: [],
            oauthProviders: [],
          },
        ],
        wallet: { walletName: 'w', accounts: [ETH_ACCOUNT] },
      });
      const id = res.subOrganizationId;
      const userId = (await clientOf(key, id).getWhoami({ organizationId: id })).userId;
      return { id, key, userId };
    };

    it('list_verified_suborgs lists only sub-organizations whose user proved the contact', async () => {
      const plain = await subOrg('plain', 'plain@example.com');
      const proven = await subOrg('proven', 'first@example.com');
      const token = await serviceVerificationToken(h, { contact: 'proven@example.com', organizationId: org });
      await clientOf(proven.key, proven.id).updateUserEmail({
        organizationId: proven.id,
        userId: proven.userId,
        userEmail: 'proven@example.com',
        verificationToken: token,
      });
      const verified = (f: { filterType?: string; filterValue?: string }) =>
        api.getVerifiedSubOrgIds({ organizationId: org, ...f }).then((r) => r.organizationIds);

      expect(await verified({ filterType: 'EMAIL', filterValue: 'proven@example.com' })).toEqual([proven.id]);
      expect(await verified({ filterType: 'EMAIL', filterValue: 'PROVEN@example.com' })).toEqual([proven.id]);
      expect(await verified({ filterType: 'EMAIL', filterValue: 'plain@example.com' })).toEqual([]);
      // list_suborgs does not care about verification.
      expect(
        (
          await api.getSubOrgIds({
            organizationId: org,
            filterType: 'EMAIL',
            filterValue: 'plain@example.com',
          })
        ).organizationIds,
      ).toEqual([plain.id]);
      expect(await verified({})).toEqual([proven.id]);
      const bad = await refusal(
        api.getVerifiedSubOrgIds({ organizationId: org, filterType: 'NAME', filterValue: 'x' }),
      );
      expect(bad.message).toMatch(/filterType: must be one of EMAIL, PHONE_NUMBER/);

      // A changed email is no longer the verified one.
      await clientOf(proven.key, proven.id).updateUserEmail({
        organizationId: proven.id,
        userId: proven.userId,
        userEmail: 'other@example.com',
      });
      expect(await verified({ filterType: 'EMAIL', filterValue: 'proven@example.com' })).toEqual([]);
      expect(await verified({})).toEqual([]);
    });

    it('delete_sub_organization removes the sub-organization, its keys and credentials', async () => {
      const doomed = await subOrg('doomed', 'doomed@example.com');
      const sub = clientOf(doomed.key, doomed.id);
      const refused = await refusal(sub.deleteSubOrganization({ organizationId: doomed.id }));
      expect(refused.message).toMatch(
        /parameters\.deleteWithoutExport: a wallet of the sub-organization has not been exported/,
      );
      expect((await api.getSubOrgIds({ organizationId: org })).organizationIds).toContain(doomed.id);

      const top = await refusal(
        api.deleteSubOrganization({ organizationId: org, deleteWithoutExport: true }),
      );
      expect(top.message).toMatch(/organizationId: is not a sub-organization/);

      expect(
        await sub.deleteSubOrganization({ organizationId: doomed.id, deleteWithoutExport: true }),
      ).toMatchObject({ subOrganizationUuid: doomed.id });
      expect((await api.getSubOrgIds({ organizationId: org })).organizationIds).not.toContain(doomed.id);
      // Neither the parent nor the sub-organization's own key reaches it any more.
      const read = await refusal(api.getWallets({ organizationId: doomed.id }));
      expect(read.code).toBe(5); // NOT_FOUND
      const own = await refusal(sub.getWhoami({ organizationId: doomed.id }));
      expect([5, 16]).toContain(own.code); // NOT_FOUND or UNAUTHENTICATED
      // Its name is free again.
      await subOrg('doomed', 'again@example.com');
    });
  });
});
