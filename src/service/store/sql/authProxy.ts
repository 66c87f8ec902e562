/**
 * The auth proxy's store area (issue 13): proxy configurations and OTPs. Its own file so the SQL
 * runs on both engines; spread into parts.ts like the other areas.
 */
import type { Conn, Row } from '../conn.js';
import type { AuthProxyConfigRecord, OtpRecord, Store, StoreTx } from '../types.js';

function toConfig(r: Row): AuthProxyConfigRecord {
  return {
    organizationId: r.organization_id as string,
    configId: r.config_id as string,
    enabled: Number(r.enabled) === 1,
    userId: r.user_id as string,
    apiKeyId: r.api_key_id as string,
    sealedApiKey: new Uint8Array(r.sealed_api_key as Buffer),
    policyId: r.policy_id as string,
    settingsJson: r.settings_json as string,
    createdAtMs: Number(r.created_at_ms),
    updatedAtMs: Number(r.updated_at_ms),
  };
}

function toOtp(r: Row): OtpRecord {
  return {
    id: r.id as string,
    organizationId: r.organization_id as string,
    otpType: r.otp_type as OtpRecord['otpType'],
    contact: r.contact as string,
    codeHash: new Uint8Array(r.code_hash as Buffer),
    attempts: Number(r.attempts),
    expiresAtMs: Number(r.expires_at_ms),
    closedAtMs: r.closed_at_ms === null ? null : Number(r.closed_at_ms),
    createdAtMs: Number(r.created_at_ms),
  };
}

type AuthProxyTx = Pick<
  StoreTx,
  'putAuthProxyConfig' | 'authProxyConfigInTx' | 'insertOtp' | 'countLiveOtps' | 'otpInTx' | 'updateOtpState'
>;
type AuthProxyRead = Pick<Store, 'getAuthProxyConfig' | 'getAuthProxyConfigById'>;

export function authProxyParts(db: Conn): { tx: AuthProxyTx; read: AuthProxyRead } {
  const p = (sql: string) => db.prepare(sql);
  const s = {
    putConfig: p(
      `INSERT INTO auth_proxy_configs (organization_id, config_id, enabled, user_id, api_key_id, sealed_api_key,
         policy_id, settings_json, created_at_ms, updated_at_ms) VALUES (?,?,?,?,?,?,?,?,?,?)
       ON CONFLICT (organization_id) DO UPDATE SET config_id = excluded.config_id, enabled = excluded.enabled,
         user_id = excluded.user_id, api_key_id = excluded.api_key_id, sealed_api_key = excluded.sealed_api_key,
         policy_id = excluded.policy_id, settings_json = excluded.settings_json, updated_at_ms = excluded.updated_at_ms`,
    ),
    config: p('SELECT * FROM auth_proxy_configs WHERE organization_id = ?'),
    configById: p('SELECT * FROM auth_proxy_configs WHERE config_id = ?'),
    insOtp: p(
      `INSERT INTO otps (id, organization_id, otp_type, contact, code_hash, attempts, expires_at_ms, closed_at_ms,
         created_at_ms) VALUES (?,?,?,?,?,?,?,?,?)`,
    ),
    liveOtps: p(
      `SELECT COUNT(*) AS n FROM otps WHERE organization_id = ? AND contact = ? AND closed_at_ms IS NULL
         AND expires_at_ms > ?`,
    ),
    otp: p('SELECT * FROM otps WHERE id = ?'),
    otpState: p('UPDATE otps SET attempts = ?, closed_at_ms = ? WHERE id = ?'),
  };
  const row = (r: unknown) => r as Row | undefined;
  return {
    tx: {
      putAuthProxyConfig: async (r) => {
        await s.putConfig.run(
          r.organizationId,
          r.configId,
          r.enabled ? 1 : 0,
          r.userId,
          r.apiKeyId,
          Buffer.from(r.sealedApiKey),
          r.policyId,
          r.settingsJson,
          r.createdAtMs,
          r.updatedAtMs,
        );
      },
      authProxyConfigInTx: async (org) => {
        const r = row(await s.config.get(org));
        return r === undefined ? undefined : toConfig(r);
      },
      insertOtp: async (r) => {
        await s.insOtp.run(
          r.id,
          r.organizationId,
          r.otpType,
          r.contact,
          Buffer.from(r.codeHash),
          r.attempts,
          r.expiresAtMs,
          r.closedAtMs,
          r.createdAtMs,
        );
      },
      countLiveOtps: async (org, contact, nowMs) =>
        Number(((await s.liveOtps.get(org, contact, nowMs)) as Row).n),
      otpInTx: async (id) => {
        const r = row(await s.otp.get(id));
        return r === undefined ? undefined : toOtp(r);
      },
      updateOtpState: async (id, attempts, closedAtMs) => {
        await s.otpState.run(attempts, closedAtMs, id);
      },
    },
    read: {
      getAuthProxyConfig: async (org) => {
        const r = row(await s.config.get(org));
        return r === undefined ? undefined : toConfig(r);
      },
      getAuthProxyConfigById: async (id) => {
        const r = row(await s.configById.get(id));
        return r === undefined ? undefined : toConfig(r);
      },
    },
  };
}
