import { str, num, bytes, nstr, b, type Conn, type Stmt, type Row } from '../conn.js';
import {
  type FiatOnRampCredentialRecord,
  type FiatOnRampProvider,
  type OrganizationFeatureRecord,
  type SmartContractInterfaceRecord,
  type SmartContractInterfaceType,
  type Store,
  type StoreTx,
  type TvcDeploymentRecord,
  type TvcDeploymentStatus,
} from '../types.js';

// --- other resources ---
// Smart contract interfaces, fiat on-ramp credentials, TVC deployments and organization features
// (issue 4); spread into the transaction and read objects of parts.ts.
type OtherResourcesTx = Pick<
  StoreTx,
  | 'insertSmartContractInterface'
  | 'smartContractInterfaceExists'
  | 'deleteSmartContractInterface'
  | 'insertFiatOnRampCredential'
  | 'getFiatOnRampCredential'
  | 'fiatOnRampCredentialTaken'
  | 'updateFiatOnRampCredential'
  | 'deleteFiatOnRampCredential'
  | 'insertTvcDeployment'
  | 'getTvcDeployment'
  | 'setTvcDeploymentStatus'
  | 'setOrganizationFeature'
  | 'removeOrganizationFeature'
  | 'listOrganizationFeatures'
>;
type OtherResourcesRead = Pick<
  Store,
  | 'getSmartContractInterface'
  | 'listSmartContractInterfaces'
  | 'listFiatOnRampCredentials'
  | 'getTvcDeployment'
  | 'listTvcDeployments'
  | 'listOrganizationFeatures'
>;

/** Ethereum addresses compare case-insensitively (EIP-55 is only a checksum); Solana's are base58. */
const interfaceAddressKey = (type: SmartContractInterfaceType, address: string): string =>
  type === 'SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM' ? address.toLowerCase() : address;

export function otherResourcesParts(db: Conn): { tx: OtherResourcesTx; read: OtherResourcesRead } {
  const p = (sql: string) => db.prepare(sql);
  const s = {
    insSci: p(
      `INSERT INTO smart_contract_interfaces (id, organization_id, type, address, address_key, interface_json, label, notes, created_at_ms, updated_at_ms)
       VALUES (?,?,?,?,?,?,?,?,?,?)`,
    ),
    sciExists: p(
      'SELECT 1 FROM smart_contract_interfaces WHERE organization_id = ? AND type = ? AND address_key = ?',
    ),
    delSci: p('DELETE FROM smart_contract_interfaces WHERE organization_id = ? AND id = ?'),
    sci: p('SELECT * FROM smart_contract_interfaces WHERE organization_id = ? AND id = ?'),
    scis: p('SELECT * FROM smart_contract_interfaces WHERE organization_id = ? ORDER BY created_at_ms, id'),
    insFiat: p(
      `INSERT INTO fiat_on_ramp_credentials (id, organization_id, provider, project_id, publishable_api_key, sealed_secret_api_key, sealed_private_api_key, sandbox_mode, created_at_ms, updated_at_ms)
       VALUES (?,?,?,?,?,?,?,?,?,?)`,
    ),
    fiat: p('SELECT * FROM fiat_on_ramp_credentials WHERE organization_id = ? AND id = ?'),
    fiats: p('SELECT * FROM fiat_on_ramp_credentials WHERE organization_id = ? ORDER BY created_at_ms, id'),
    fiatTaken: p(
      'SELECT 1 FROM fiat_on_ramp_credentials WHERE organization_id = ? AND provider = ? AND sandbox_mode = ? AND id <> ?',
    ),
    updFiat: p(
      `UPDATE fiat_on_ramp_credentials SET provider = ?, project_id = ?, publishable_api_key = ?, sealed_secret_api_key = ?,
       sealed_private_api_key = ?, sandbox_mode = ?, updated_at_ms = ? WHERE organization_id = ? AND id = ?`,
    ),
    delFiat: p('DELETE FROM fiat_on_ramp_credentials WHERE organization_id = ? AND id = ?'),
    insTvc: p(
      `INSERT INTO tvc_deployments (id, organization_id, app_id, manifest_id, status, spec_json, sealed_pull_secret, created_at_ms, updated_at_ms)
       VALUES (?,?,?,?,?,?,?,?,?)`,
    ),
    tvc: p('SELECT * FROM tvc_deployments WHERE organization_id = ? AND id = ?'),
    tvcs: p('SELECT * FROM tvc_deployments WHERE organization_id = ? ORDER BY created_at_ms, id'),
    tvcsOfApp: p(
      'SELECT * FROM tvc_deployments WHERE organization_id = ? AND app_id = ? ORDER BY created_at_ms, id',
    ),
    tvcStatus: p(
      'UPDATE tvc_deployments SET status = ?, updated_at_ms = ? WHERE organization_id = ? AND id = ? AND status = ?',
    ),
    setFeature: p(
      `INSERT INTO organization_features (organization_id, name, value, created_at_ms, updated_at_ms) VALUES (?,?,?,?,?)
       ON CONFLICT (organization_id, name) DO UPDATE SET value = excluded.value, updated_at_ms = excluded.updated_at_ms`,
    ),
    delFeature: p('DELETE FROM organization_features WHERE organization_id = ? AND name = ?'),
    features: p('SELECT * FROM organization_features WHERE organization_id = ? ORDER BY name'),
  };
  const get = async (st: Stmt, ...a: unknown[]) => await st.get(...a);
  const all = async (st: Stmt, ...a: unknown[]) => await st.all(...a);

  const toSci = (r: Row): SmartContractInterfaceRecord => ({
    id: str(r.id),
    organizationId: str(r.organization_id),
    type: str(r.type) as SmartContractInterfaceType,
    address: str(r.address),
    interfaceJson: str(r.interface_json),
    label: str(r.label),
    notes: str(r.notes),
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  });
  const toFiat = (r: Row): FiatOnRampCredentialRecord => ({
    id: str(r.id),
    organizationId: str(r.organization_id),
    provider: str(r.provider) as FiatOnRampProvider,
    projectId: nstr(r.project_id),
    publishableApiKey: str(r.publishable_api_key),
    sealedSecretApiKey: bytes(r.sealed_secret_api_key),
    sealedPrivateApiKey: r.sealed_private_api_key === null ? null : bytes(r.sealed_private_api_key),
    sandboxMode: num(r.sandbox_mode) === 1,
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  });
  const toTvc = (r: Row): TvcDeploymentRecord => ({
    id: str(r.id),
    organizationId: str(r.organization_id),
    appId: str(r.app_id),
    manifestId: str(r.manifest_id),
    status: str(r.status) as TvcDeploymentStatus,
    specJson: str(r.spec_json),
    sealedPullSecret: r.sealed_pull_secret === null ? null : bytes(r.sealed_pull_secret),
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  });
  const toFeature = (r: Row): OrganizationFeatureRecord => ({
    organizationId: str(r.organization_id),
    name: str(r.name),
    value: str(r.value),
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  });
  const getFiat = async (org: string, id: string) => {
    const r = await get(s.fiat, org, id);
    return r && toFiat(r);
  };
  const getTvc = async (org: string, id: string) => {
    const r = await get(s.tvc, org, id);
    return r && toTvc(r);
  };
  const features = async (org: string) => (await all(s.features, org)).map(toFeature);

  return {
    tx: {
      insertSmartContractInterface: async (r) => {
        await s.insSci.run(
          r.id,
          r.organizationId,
          r.type,
          r.address,
          interfaceAddressKey(r.type, r.address),
          r.interfaceJson,
          r.label,
          r.notes,
          r.createdAtMs,
          r.updatedAtMs,
        );
      },
      smartContractInterfaceExists: async (org, type, address) =>
        (await get(s.sciExists, org, type, interfaceAddressKey(type, address))) !== undefined,
      deleteSmartContractInterface: async (org, id) => (await s.delSci.run(org, id)).changes === 1,
      insertFiatOnRampCredential: async (r) => {
        await s.insFiat.run(
          r.id,
          r.organizationId,
          r.provider,
          r.projectId,
          r.publishableApiKey,
          r.sealedSecretApiKey,
          r.sealedPrivateApiKey,
          b(r.sandboxMode),
          r.createdAtMs,
          r.updatedAtMs,
        );
      },
      getFiatOnRampCredential: getFiat,
      fiatOnRampCredentialTaken: async (org, provider, sandbox, exceptId) =>
        (await get(s.fiatTaken, org, provider, b(sandbox), exceptId ?? '')) !== undefined,
      updateFiatOnRampCredential: async (r) =>
        (
          await s.updFiat.run(
            r.provider,
            r.projectId,
            r.publishableApiKey,
            r.sealedSecretApiKey,
            r.sealedPrivateApiKey,
            b(r.sandboxMode),
            r.updatedAtMs,
            r.organizationId,
            r.id,
          )
        ).changes === 1,
      deleteFiatOnRampCredential: async (org, id) => (await s.delFiat.run(org, id)).changes === 1,
      insertTvcDeployment: async (r) => {
        await s.insTvc.run(
          r.id,
          r.organizationId,
          r.appId,
          r.manifestId,
          r.status,
          r.specJson,
          r.sealedPullSecret,
          r.createdAtMs,
          r.updatedAtMs,
        );
      },
      getTvcDeployment: getTvc,
      setTvcDeploymentStatus: async (org, id, expected, next, nowMs) =>
        (await s.tvcStatus.run(next, nowMs, org, id, expected)).changes === 1,
      setOrganizationFeature: async (org, name, value, nowMs) => {
        await s.setFeature.run(org, name, value, nowMs, nowMs);
      },
      removeOrganizationFeature: async (org, name) => (await s.delFeature.run(org, name)).changes === 1,
      listOrganizationFeatures: features,
    },
    read: {
      getSmartContractInterface: async (org, id) => {
        const r = await get(s.sci, org, id);
        return r && toSci(r);
      },
      listSmartContractInterfaces: async (org) => (await all(s.scis, org)).map(toSci),
      listFiatOnRampCredentials: async (org) => (await all(s.fiats, org)).map(toFiat),
      getTvcDeployment: async (org, id) => getTvc(org, id),
      listTvcDeployments: async (org, appId) =>
        (appId === undefined ? await all(s.tvcs, org) : await all(s.tvcsOfApp, org, appId)).map(toTvc),
      listOrganizationFeatures: async (org) => features(org),
    },
  };
}
// --- end other resources ---
