/** The one migration set. Statements are plain SQL that SQLite and PostgreSQL both accept. */
export const MIGRATIONS: readonly { readonly version: number; readonly sql: string }[] = [
  {
    version: 1,
    sql: `
CREATE TABLE organizations (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  parent_id TEXT REFERENCES organizations(id),
  root_quorum_threshold INTEGER NOT NULL,
  created_at_ms BIGINT NOT NULL
);
CREATE TABLE users (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  name TEXT NOT NULL,
  email TEXT,
  phone_number TEXT,
  is_root INTEGER NOT NULL,
  created_at_ms BIGINT NOT NULL,
  updated_at_ms BIGINT NOT NULL
);
CREATE INDEX users_org ON users(organization_id);
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id),
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  name TEXT NOT NULL,
  public_key TEXT NOT NULL,
  curve TEXT NOT NULL,
  expires_at_ms BIGINT,
  created_at_ms BIGINT NOT NULL
);
CREATE INDEX api_keys_public_key ON api_keys(public_key);
CREATE INDEX api_keys_user ON api_keys(user_id);
CREATE TABLE authenticators (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id),
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  name TEXT NOT NULL,
  credential_id TEXT NOT NULL,
  public_key TEXT NOT NULL,
  created_at_ms BIGINT NOT NULL
);
CREATE INDEX authenticators_credential ON authenticators(credential_id);
CREATE TABLE wallets (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  name TEXT NOT NULL,
  sealed_mnemonic BYTEA NOT NULL,
  exported INTEGER NOT NULL,
  imported INTEGER NOT NULL,
  created_at_ms BIGINT NOT NULL,
  updated_at_ms BIGINT NOT NULL,
  UNIQUE (organization_id, name)
);
CREATE TABLE wallet_accounts (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  wallet_id TEXT NOT NULL REFERENCES wallets(id),
  curve TEXT NOT NULL,
  path_format TEXT NOT NULL,
  path TEXT NOT NULL,
  address_format TEXT NOT NULL,
  address TEXT NOT NULL,
  address_lc TEXT NOT NULL,
  public_key TEXT NOT NULL,
  sealed_key BYTEA NOT NULL,
  created_at_ms BIGINT NOT NULL,
  updated_at_ms BIGINT NOT NULL,
  UNIQUE (wallet_id, curve, path, address_format)
);
CREATE INDEX wallet_accounts_address ON wallet_accounts(organization_id, address_lc);
CREATE TABLE private_keys (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  name TEXT NOT NULL,
  curve TEXT NOT NULL,
  public_key TEXT NOT NULL,
  sealed_key BYTEA NOT NULL,
  tags_json TEXT NOT NULL,
  exported INTEGER NOT NULL,
  imported INTEGER NOT NULL,
  created_at_ms BIGINT NOT NULL,
  updated_at_ms BIGINT NOT NULL,
  UNIQUE (organization_id, name)
);
CREATE TABLE private_key_addresses (
  private_key_id TEXT NOT NULL REFERENCES private_keys(id),
  organization_id TEXT NOT NULL,
  format TEXT NOT NULL,
  address TEXT NOT NULL,
  address_lc TEXT NOT NULL,
  position INTEGER NOT NULL,
  PRIMARY KEY (private_key_id, position)
);
CREATE INDEX private_key_addresses_address ON private_key_addresses(organization_id, address_lc);
CREATE TABLE activities (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  type TEXT NOT NULL,
  status TEXT NOT NULL,
  fingerprint TEXT NOT NULL UNIQUE,
  intent_key TEXT NOT NULL,
  intent_json TEXT NOT NULL,
  result_key TEXT NOT NULL,
  result_json TEXT,
  failure_json TEXT,
  timestamp_ms TEXT NOT NULL,
  created_at_ms BIGINT NOT NULL,
  updated_at_ms BIGINT NOT NULL
);
CREATE INDEX activities_org ON activities(organization_id, id);
CREATE TABLE votes (
  id TEXT PRIMARY KEY,
  activity_id TEXT NOT NULL REFERENCES activities(id),
  user_id TEXT NOT NULL,
  selection TEXT NOT NULL,
  message TEXT NOT NULL,
  public_key TEXT NOT NULL,
  signature TEXT NOT NULL,
  scheme TEXT NOT NULL,
  created_at_ms BIGINT NOT NULL
);
CREATE INDEX votes_activity ON votes(activity_id);
`,
  },
  {
    // Policies (turnkey-api.md 8.1) and the record of every policy evaluation (8.2).
    version: 2,
    sql: `
CREATE TABLE policies (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  name TEXT NOT NULL,
  effect TEXT NOT NULL,
  condition_src TEXT,
  consensus_src TEXT,
  time_src TEXT,
  notes TEXT NOT NULL,
  created_at_ms BIGINT NOT NULL,
  updated_at_ms BIGINT NOT NULL,
  UNIQUE (organization_id, name)
);
CREATE TABLE policy_evaluations (
  id TEXT PRIMARY KEY,
  activity_id TEXT NOT NULL REFERENCES activities(id),
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  vote_id TEXT,
  outcome TEXT NOT NULL,
  results_json TEXT NOT NULL,
  created_at_ms BIGINT NOT NULL
);
CREATE INDEX policy_evaluations_activity ON policy_evaluations(activity_id, created_at_ms);
`,
  },
  {
    // The service's own keys (the export-bundle signing key, turnkey-api.md 9.5), sealed by the vault.
    version: 3,
    sql: `
CREATE TABLE service_keys (
  id TEXT PRIMARY KEY,
  public_key TEXT NOT NULL,
  sealed_key BYTEA NOT NULL,
  created_at_ms BIGINT NOT NULL
);
`,
  },
];
