import { describe, expect, it } from 'vitest';
import { activityKind, activityResourceAction } from './activityResourceAction.js';
import { buildFacts } from './buildFacts.js';

describe('activityKind', () => {
  it.each([
    ['ACTIVITY_TYPE_SIGN_TRANSACTION_V2', 'SIGN_TRANSACTION'],
    ['ACTIVITY_TYPE_SIGN_TRANSACTION', 'SIGN_TRANSACTION'],
    ['ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8', 'CREATE_SUB_ORGANIZATION'],
    ['ACTIVITY_TYPE_CREATE_POLICY_V3', 'CREATE_POLICY'],
    ['ACTIVITY_TYPE_SIGN_RAW_PAYLOADS', 'SIGN_RAW_PAYLOADS'],
    ['ACTIVITY_TYPE_OAUTH2_AUTHENTICATE', 'OAUTH2_AUTHENTICATE'],
  ])('%s → %s', (type, kind) => {
    expect(activityKind(type)).toBe(kind);
  });
});

describe('activityResourceAction', () => {
  it.each([
    ['ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', 'PRIVATE_KEY', 'SIGN'],
    ['ACTIVITY_TYPE_SIGN_RAW_PAYLOADS', 'PRIVATE_KEY', 'SIGN'],
    ['ACTIVITY_TYPE_SIGN_TRANSACTION_V2', 'PRIVATE_KEY', 'SIGN'],
    ['ACTIVITY_TYPE_ETH_SEND_TRANSACTION', 'PRIVATE_KEY', 'SIGN'],
    ['ACTIVITY_TYPE_SOL_SEND_TRANSACTION', 'PRIVATE_KEY', 'SIGN'],
    ['ACTIVITY_TYPE_CREATE_WALLET', 'WALLET', 'CREATE'],
    ['ACTIVITY_TYPE_DELETE_WALLETS', 'WALLET', 'DELETE'],
    ['ACTIVITY_TYPE_EXPORT_WALLET', 'WALLET', 'EXPORT'],
    ['ACTIVITY_TYPE_EXPORT_WALLET_ACCOUNT', 'WALLET', 'EXPORT'],
    ['ACTIVITY_TYPE_IMPORT_WALLET', 'WALLET', 'IMPORT'],
    ['ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2', 'PRIVATE_KEY', 'CREATE'],
    ['ACTIVITY_TYPE_EXPORT_PRIVATE_KEY', 'PRIVATE_KEY', 'EXPORT'],
    ['ACTIVITY_TYPE_CREATE_POLICY_V3', 'POLICY', 'CREATE'],
    ['ACTIVITY_TYPE_CREATE_POLICIES', 'POLICY', 'CREATE'],
    ['ACTIVITY_TYPE_UPDATE_POLICY_V2', 'POLICY', 'UPDATE'],
    ['ACTIVITY_TYPE_DELETE_POLICY', 'POLICY', 'DELETE'],
    ['ACTIVITY_TYPE_CREATE_USERS_V3', 'USER', 'CREATE'],
    ['ACTIVITY_TYPE_UPDATE_USER', 'USER', 'UPDATE'],
    ['ACTIVITY_TYPE_UPDATE_USER_EMAIL', 'USER', 'UPDATE'],
    ['ACTIVITY_TYPE_DELETE_USERS', 'USER', 'DELETE'],
    ['ACTIVITY_TYPE_CREATE_USER_TAG', 'USER', 'CREATE'],
    ['ACTIVITY_TYPE_CREATE_API_KEYS_V2', 'CREDENTIAL', 'CREATE'],
    ['ACTIVITY_TYPE_DELETE_API_KEYS', 'CREDENTIAL', 'DELETE'],
    ['ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8', 'ORGANIZATION', 'CREATE'],
    ['ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE', 'ORGANIZATION', 'UPDATE'],
    ['ACTIVITY_TYPE_REMOVE_ORGANIZATION_FEATURE', 'ORGANIZATION', 'UPDATE'],
    ['ACTIVITY_TYPE_STAMP_LOGIN', 'AUTH', 'CREATE'],
    ['ACTIVITY_TYPE_OTP_LOGIN_V2', 'AUTH', 'CREATE'],
    ['ACTIVITY_TYPE_INIT_OTP_V3', 'OTP', 'CREATE'],
    ['ACTIVITY_TYPE_VERIFY_OTP_V2', 'OTP', 'VERIFY'],
    ['ACTIVITY_TYPE_CREATE_SMART_CONTRACT_INTERFACE', 'SMART_CONTRACT_INTERFACE', 'CREATE'],
    ['ACTIVITY_TYPE_DELETE_SMART_CONTRACT_INTERFACE', 'SMART_CONTRACT_INTERFACE', 'DELETE'],
    ['ACTIVITY_TYPE_CREATE_FIAT_ON_RAMP_CREDENTIAL', 'ON_RAMP_CREDENTIALS', 'CREATE'],
    ['ACTIVITY_TYPE_UPDATE_FIAT_ON_RAMP_CREDENTIAL', 'ON_RAMP_CREDENTIALS', 'UPDATE'],
    ['ACTIVITY_TYPE_DELETE_FIAT_ON_RAMP_CREDENTIAL', 'ON_RAMP_CREDENTIALS', 'DELETE'],
    ['ACTIVITY_TYPE_CREATE_TVC_DEPLOYMENT', 'TVC_DEPLOYMENT', 'CREATE'],
    ['ACTIVITY_TYPE_DELETE_TVC_DEPLOYMENT', 'TVC_DEPLOYMENT', 'DELETE'],
    ['ACTIVITY_TYPE_RESTORE_TVC_DEPLOYMENT', 'TVC_DEPLOYMENT', 'UPDATE'],
    ['ACTIVITY_TYPE_CREATE_INVITATIONS', 'INVITATION', 'CREATE'],
    ['ACTIVITY_TYPE_DELETE_INVITATION', 'INVITATION', 'DELETE'],
  ])('%s → %s / %s', (type, resource, action) => {
    expect(activityResourceAction(type)).toEqual({ resource, action });
  });

  it('has no entry for a kind it does not know, nor for inherited names', () => {
    expect(activityResourceAction('ACTIVITY_TYPE_EARN_DEPOSIT')).toBeUndefined();
    expect(activityResourceAction('ACTIVITY_TYPE___proto__')).toBeUndefined();
    expect(activityResourceAction('constructor')).toBeUndefined();
  });
});

describe('buildFacts', () => {
  it('gives activity type, kind, resource, action and the params of sign raw payload', () => {
    const facts = buildFacts({
      activity: {
        type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
        parameters: {
          signWith: '0xabc',
          payload: 'deadbeef',
          encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
          hashFunction: 'HASH_FUNCTION_NO_OP',
        },
      },
    });
    expect(facts).toEqual({
      activity: {
        type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
        kind: 'SIGN_RAW_PAYLOAD',
        resource: 'PRIVATE_KEY',
        action: 'SIGN',
        params: { hash_function: 'HASH_FUNCTION_NO_OP', encoding: 'PAYLOAD_ENCODING_HEXADECIMAL' },
      },
    });
  });

  it.each([
    [
      'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
      { type: 'TRANSACTION_TYPE_SOLANA', signWith: 'x' },
      { type: 'TRANSACTION_TYPE_SOLANA' },
    ],
    ['ACTIVITY_TYPE_DELETE_USERS', { userIds: ['u1', 'u2'] }, { user_ids: ['u1', 'u2'] }],
    ['ACTIVITY_TYPE_CREATE_API_KEYS_V2', { userId: 'u1', apiKeys: [] }, { user_id: 'u1' }],
    [
      'ACTIVITY_TYPE_DELETE_API_KEYS',
      { userId: 'u1', apiKeyIds: ['k'] },
      { user_id: 'u1', api_key_ids: ['k'] },
    ],
    [
      'ACTIVITY_TYPE_EXPORT_WALLET_ACCOUNT',
      { address: 'a', targetPublicKey: '04ff' },
      { target_public_key: '04ff' },
    ],
    [
      'ACTIVITY_TYPE_EXPORT_PRIVATE_KEY',
      { privateKeyId: 'p', targetPublicKey: '04ee' },
      { target_public_key: '04ee' },
    ],
    ['ACTIVITY_TYPE_INIT_OTP_AUTH_V3', { otpLength: 6 }, { otp_length: 6n }],
    ['ACTIVITY_TYPE_STAMP_LOGIN', { publicKey: '02', sessionProfileId: 'sp' }, { session_profile_id: 'sp' }],
    ['ACTIVITY_TYPE_CREATE_POLICY_V3', { policyName: 'n' }, {}],
  ])('exposes the params of %s', (type, parameters, params) => {
    expect(
      (buildFacts({ activity: { type, parameters } })['activity'] as { params: unknown }).params,
    ).toEqual(params);
  });

  it('leaves out params that were not sent, and resource/action of unknown kinds', () => {
    const facts = buildFacts({ activity: { type: 'ACTIVITY_TYPE_EARN_DEPOSIT', parameters: {} } });
    expect(facts).toEqual({
      activity: { type: 'ACTIVITY_TYPE_EARN_DEPOSIT', kind: 'EARN_DEPOSIT', params: {} },
    });
    const noHash = buildFacts({
      activity: {
        type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS',
        parameters: { encoding: 'E', hashFunction: null },
      },
    });
    expect((noHash['activity'] as { params: unknown }).params).toEqual({ encoding: 'E' });
  });

  it('gives the signer and the chain facts under their keywords', () => {
    const tx = { to: '0x01', value: 1n };
    const facts = buildFacts({
      activity: { type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2', parameters: {} },
      wallet: { id: 'w', label: 'main', imported: false, exported: true },
      walletAccount: { address: '0xAbC' },
      transaction: { chain: 'eth', tx },
      eip7702Authorization: { address: '0x02', chain_id: 1n, nonce: 0n },
    });
    expect(facts['wallet']).toEqual({ id: 'w', label: 'main', imported: false, exported: true });
    expect(facts['wallet_account']).toEqual({ address: '0xAbC' });
    expect(facts['eth']).toEqual({
      tx,
      eip_7702_authorization: { address: '0x02', chain_id: 1n, nonce: 0n },
    });
    expect(facts).not.toHaveProperty('private_key');
    expect(facts).not.toHaveProperty('solana');

    const sol = buildFacts({
      activity: { type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2', parameters: {} },
      privateKey: { id: 'k', label: 'l', tags: ['t'], imported: true, exported: false },
      transaction: { chain: 'solana', tx: { transfers: [] } },
    });
    expect(sol['solana']).toEqual({ tx: { transfers: [] } });
    expect(sol['private_key']).toEqual({ id: 'k', label: 'l', tags: ['t'], imported: true, exported: false });
    expect(sol).not.toHaveProperty('eth');
  });
});
