/** `list_activities` honours `filterByStatus` and `filterByType`, as @turnkey/sdk-server's getActivities sends them. */
import { Turnkey } from '@turnkey/sdk-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ethAddressOf, startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';

describe('list_activities filters', () => {
  let h: EmbeddedHarness;
  let api: ReturnType<Turnkey['apiClient']>;
  let org: string;

  beforeAll(async () => {
    h = await startEmbedded();
    org = h.service.credentials.organizationId;
    api = new Turnkey({
      apiBaseUrl: h.baseUrl,
      apiPublicKey: h.service.credentials.apiPublicKey,
      apiPrivateKey: h.service.credentials.apiPrivateKey,
      defaultOrganizationId: org,
    }).apiClient();
    for (let i = 0; i < 3; i++)
      await api.signRawPayload({
        signWith: ethAddressOf(h),
        payload: `${i}`.padStart(64, '0'),
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      });
    await api.createPolicy({ policyName: 'noop', effect: 'EFFECT_ALLOW', condition: 'false', notes: '' });
  });

  afterAll(() => h?.close());

  it('returns only the activity types asked for', async () => {
    const signs = await api.getActivities({ filterByType: ['ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2'] });
    expect(signs.activities).toHaveLength(3);
    expect(new Set(signs.activities.map((a) => a.type))).toEqual(
      new Set(['ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2']),
    );
    const both = await api.getActivities({
      filterByType: ['ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', 'ACTIVITY_TYPE_CREATE_POLICY_V3'],
    });
    expect(both.activities).toHaveLength(4);
    const all = await api.getActivities({});
    expect(all.activities).toHaveLength(4);
  });

  it('returns only the statuses asked for, combined with the type filter', async () => {
    expect(
      (await api.getActivities({ filterByStatus: ['ACTIVITY_STATUS_COMPLETED'] })).activities,
    ).toHaveLength(4);
    expect((await api.getActivities({ filterByStatus: ['ACTIVITY_STATUS_FAILED'] })).activities).toHaveLength(
      0,
    );
    const r = await api.getActivities({
      filterByStatus: ['ACTIVITY_STATUS_COMPLETED', 'ACTIVITY_STATUS_CONSENSUS_NEEDED'],
      filterByType: ['ACTIVITY_TYPE_CREATE_POLICY_V3'],
    });
    expect(r.activities.map((a) => a.type)).toEqual(['ACTIVITY_TYPE_CREATE_POLICY_V3']);
  });

  it('refuses an unknown status naming the field', async () => {
    await expect(api.getActivities({ filterByStatus: ['ACTIVITY_STATUS_DONE' as never] })).rejects.toThrow(
      /filterByStatus\[0\]: must be one of/,
    );
  });
});
