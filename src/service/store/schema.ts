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
  {
    // --- users --- user tags, OAuth providers and invitations (issue 4).
    version: 4,
    sql: `
CREATE TABLE user_tags (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  name TEXT NOT NULL,
  created_at_ms BIGINT NOT NULL,
  updated_at_ms BIGINT NOT NULL,
  UNIQUE (organization_id, name)
);
CREATE TABLE user_tag_members (
  tag_id TEXT NOT NULL REFERENCES user_tags(id),
  user_id TEXT NOT NULL REFERENCES users(id),
  PRIMARY KEY (tag_id, user_id)
);
CREATE INDEX user_tag_members_user ON user_tag_members(user_id);
CREATE TABLE oauth_providers (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id),
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  name TEXT NOT NULL,
  issuer TEXT NOT NULL,
  audience TEXT NOT NULL,
  subject TEXT NOT NULL,
  created_at_ms BIGINT NOT NULL
);
CREATE INDEX oauth_providers_user ON oauth_providers(user_id);
CREATE INDEX oauth_providers_claims ON oauth_providers(organization_id, issuer, audience, subject);
CREATE TABLE invitations (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  receiver_user_name TEXT NOT NULL,
  receiver_email TEXT NOT NULL,
  receiver_tags_json TEXT NOT NULL,
  access_type TEXT NOT NULL,
  sender_user_id TEXT NOT NULL,
  status TEXT NOT NULL,
  created_at_ms BIGINT NOT NULL,
  updated_at_ms BIGINT NOT NULL
);
CREATE INDEX invitations_org ON invitations(organization_id, created_at_ms);
`,
  },
  {
    // --- other resources --- smart contract interfaces, fiat on-ramp credentials (secrets sealed by
    // the vault), TVC deployments and organization features (issue 4).
    version: 5,
    sql: `
CREATE TABLE smart_contract_interfaces (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  type TEXT NOT NULL,
  address TEXT NOT NULL,
  address_key TEXT NOT NULL,
  interface_json TEXT NOT NULL,
  label TEXT NOT NULL,
  notes TEXT NOT NULL,
  created_at_ms BIGINT NOT NULL,
  updated_at_ms BIGINT NOT NULL,
  UNIQUE (organization_id, type, address_key)
);
CREATE TABLE fiat_on_ramp_credentials (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  provider TEXT NOT NULL,
  project_id TEXT,
  publishable_api_key TEXT NOT NULL,
  sealed_secret_api_key BYTEA NOT NULL,
  sealed_private_api_key BYTEA,
  sandbox_mode INTEGER NOT NULL,
  created_at_ms BIGINT NOT NULL,
  updated_at_ms BIGINT NOT NULL,
  UNIQUE (organization_id, provider, sandbox_mode)
);
CREATE TABLE tvc_deployments (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  app_id TEXT NOT NULL,
  manifest_id TEXT NOT NULL,
  status TEXT NOT NULL,
  spec_json TEXT NOT NULL,
  sealed_pull_secret BYTEA,
  created_at_ms BIGINT NOT NULL,
  updated_at_ms BIGINT NOT NULL
);
CREATE INDEX tvc_deployments_app ON tvc_deployments(organization_id, app_id, created_at_ms);
CREATE TABLE organization_features (
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  created_at_ms BIGINT NOT NULL,
  updated_at_ms BIGINT NOT NULL,
  PRIMARY KEY (organization_id, name)
);
`,
  },
  {
    // --- sub-organizations and sessions --- stamp_login session keys (turnkey-api.md 9.1; the key
    // row itself is in api_keys, gone with it) and the verification tokens already used (9.2).
    version: 6,
    sql: `
CREATE TABLE login_sessions (
  api_key_id TEXT PRIMARY KEY REFERENCES api_keys(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL,
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  expires_at_ms BIGINT NOT NULL,
  created_at_ms BIGINT NOT NULL
);
CREATE INDEX login_sessions_user ON login_sessions(user_id);
CREATE TABLE used_verification_tokens (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL,
  used_at_ms BIGINT NOT NULL
);
CREATE INDEX organizations_parent ON organizations(parent_id, id);
`,
  },
  {
    // --- eth send transaction --- the nonce allocator per (chain, address) and the send-status rows
    // with the signed bytes every re-broadcast reuses (issue 5). Nonces are decimal text (64-bit).
    // activity_id has no foreign key: the row is written before its activity in the same transaction.
    version: 7,
    sql: `
CREATE TABLE eth_nonce_allocations (
  caip2 TEXT NOT NULL,
  address TEXT NOT NULL,
  next_nonce TEXT NOT NULL,
  PRIMARY KEY (caip2, address)
);
CREATE TABLE send_transactions (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  activity_id TEXT NOT NULL,
  caip2 TEXT NOT NULL,
  from_address TEXT NOT NULL,
  nonce TEXT NOT NULL,
  signed_transaction BYTEA NOT NULL,
  tx_hash TEXT NOT NULL,
  status TEXT NOT NULL,
  block_number TEXT,
  error_message TEXT,
  created_at_ms BIGINT NOT NULL,
  updated_at_ms BIGINT NOT NULL
);
CREATE INDEX send_transactions_status ON send_transactions(status, created_at_ms);
`,
  },
  {
    // --- eth send transaction --- batches through the gas station (issue 5): who submits the
    // transaction (from_address: the sponsor, or the account itself for an unsponsored batch) differs
    // from the account whose calls run (account_address), and the batch carries its gas-station nonce.
    // A failed send keeps its decoded revert chain (JSON) beside the message, and every status a send
    // takes is recorded with its time, in the write that moves it.
    version: 8,
    sql: `
ALTER TABLE send_transactions ADD COLUMN kind TEXT NOT NULL DEFAULT 'DIRECT';
ALTER TABLE send_transactions ADD COLUMN account_address TEXT;
ALTER TABLE send_transactions ADD COLUMN gas_station_nonce TEXT;
ALTER TABLE send_transactions ADD COLUMN revert_chain_json TEXT;
CREATE TABLE send_transaction_transitions (
  send_id TEXT NOT NULL,
  status TEXT NOT NULL,
  error_message TEXT,
  at_ms BIGINT NOT NULL
);
CREATE INDEX send_transaction_transitions_send ON send_transaction_transitions(send_id, at_ms);
`,
  },
  {
    // --- administration --- (issue 10) a deleted sub-organization keeps its row (its activities
    // still point at it) but is no longer found; private-key tags; contacts a user proved to hold; the
    // app proofs an activity was asked for.
    version: 9,
    sql: `
ALTER TABLE organizations ADD COLUMN deleted_at_ms BIGINT;
ALTER TABLE activities ADD COLUMN app_proofs_json TEXT;
CREATE TABLE private_key_tags (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  name TEXT NOT NULL,
  created_at_ms BIGINT NOT NULL,
  updated_at_ms BIGINT NOT NULL,
  UNIQUE (organization_id, name)
);
CREATE TABLE verified_contacts (
  user_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  value TEXT NOT NULL,
  verified_at_ms BIGINT NOT NULL,
  PRIMARY KEY (user_id, kind)
);
`,
  },
  {
    // --- key and wallet import --- one-time P-256 target keys of init_import_wallet and
    // init_import_private_key (issue 10): sealed at rest, bound to (organization, user, kind), used
    // once. A used row keeps the bundle's encapsulated key (to name a replay) and loses its sealed key.
    // No foreign keys (as used_verification_tokens): a target must not hold up deleting its user.
    // Version 10: main's administration area took 9.
    version: 10,
    sql: `
CREATE TABLE import_targets (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  public_key TEXT NOT NULL,
  sealed_key BYTEA,
  expires_at_ms BIGINT NOT NULL,
  created_at_ms BIGINT NOT NULL,
  consumed_at_ms BIGINT,
  consumed_enc TEXT
);
CREATE INDEX import_targets_user ON import_targets(organization_id, user_id, created_at_ms);
CREATE INDEX import_targets_consumed_enc ON import_targets(organization_id, consumed_enc);
`,
  },
  {
    // --- webhooks --- endpoints with their subscriptions, the outbox (one event per reported change,
    // one delivery per event and receiving lane, written in the transaction of the change), every
    // attempt of a delivery, and the Ed25519 keys that sign deliveries (issue 14). A lane is one
    // receiver (an endpoint, or an organization's FEATURE_NAME_WEBHOOK URL); order is kept per lane.
    version: 11,
    sql: `
CREATE TABLE webhook_endpoints (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id),
  url TEXT NOT NULL,
  name TEXT NOT NULL,
  is_active INTEGER NOT NULL,
  created_at_ms BIGINT NOT NULL,
  updated_at_ms BIGINT NOT NULL
);
CREATE INDEX webhook_endpoints_org ON webhook_endpoints(organization_id, created_at_ms);
CREATE TABLE webhook_subscriptions (
  endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  event_type TEXT NOT NULL,
  filters_json TEXT,
  is_active INTEGER NOT NULL,
  position INTEGER NOT NULL,
  PRIMARY KEY (endpoint_id, event_type)
);
CREATE TABLE webhook_events (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  subject_id TEXT NOT NULL,
  snapshot_json TEXT NOT NULL,
  body_json TEXT,
  created_at_ms BIGINT NOT NULL
);
CREATE INDEX webhook_events_subject ON webhook_events(subject_id);
CREATE TABLE webhook_deliveries (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  event_id TEXT NOT NULL REFERENCES webhook_events(id),
  lane TEXT NOT NULL,
  source TEXT NOT NULL,
  endpoint_id TEXT,
  owner_organization_id TEXT NOT NULL,
  url TEXT NOT NULL,
  state TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  next_attempt_at_ms BIGINT NOT NULL,
  lease_until_ms BIGINT NOT NULL,
  window_start_ms BIGINT NOT NULL,
  last_error TEXT,
  delivered_at_ms BIGINT,
  created_at_ms BIGINT NOT NULL,
  updated_at_ms BIGINT NOT NULL
);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries(lane, seq) WHERE state = 'PENDING';
CREATE INDEX webhook_deliveries_owner ON webhook_deliveries(owner_organization_id, seq);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries(event_id);
CREATE TABLE webhook_attempts (
  delivery_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  started_at_ms BIGINT NOT NULL,
  latency_ms INTEGER NOT NULL,
  status_code INTEGER,
  outcome TEXT NOT NULL,
  error TEXT,
  signing_key_id TEXT,
  PRIMARY KEY (delivery_id, attempt)
);
CREATE TABLE webhook_signing_keys (
  id TEXT PRIMARY KEY,
  public_key TEXT NOT NULL,
  sealed_key BYTEA NOT NULL,
  created_at_ms BIGINT NOT NULL,
  retired_at_ms BIGINT
);
`,
  },
  // --- auth proxy --- proxy configurations and OTPs (issue 13). OTP codes are stored as hashes only.
  {
    version: 12,
    sql: `
CREATE TABLE auth_proxy_configs (
  organization_id TEXT PRIMARY KEY,
  config_id TEXT NOT NULL UNIQUE,
  enabled INTEGER NOT NULL,
  user_id TEXT NOT NULL,
  api_key_id TEXT NOT NULL,
  sealed_api_key BYTEA NOT NULL,
  policy_id TEXT NOT NULL,
  settings_json TEXT NOT NULL,
  created_at_ms BIGINT NOT NULL,
  updated_at_ms BIGINT NOT NULL
);
CREATE TABLE otps (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL,
  otp_type TEXT NOT NULL,
  contact TEXT NOT NULL,
  code_hash BYTEA NOT NULL,
  attempts INTEGER NOT NULL,
  expires_at_ms BIGINT NOT NULL,
  closed_at_ms BIGINT,
  created_at_ms BIGINT NOT NULL
);
CREATE INDEX otps_contact ON otps(organization_id, contact, expires_at_ms);
`,
  },
  // --- end auth proxy ---
  // --- replicas --- leases and claims that let several replicas share one database (issue 11).
  // A voter counts once per activity: a second vote an older version kept is dropped (the earliest
  // stays; it never counted twice, approvers are users).
  {
    version: 13,
    sql: `
ALTER TABLE activities ADD COLUMN lease_owner TEXT;
ALTER TABLE activities ADD COLUMN lease_expires_at_ms INTEGER;
DELETE FROM votes WHERE id IN (SELECT v.id FROM votes v JOIN votes w
  ON w.activity_id = v.activity_id AND w.user_id = v.user_id
  AND (w.created_at_ms < v.created_at_ms OR (w.created_at_ms = v.created_at_ms AND w.id < v.id)));
CREATE UNIQUE INDEX votes_one_per_voter ON votes(activity_id, user_id);
ALTER TABLE send_transactions ADD COLUMN claimed_by TEXT;
ALTER TABLE send_transactions ADD COLUMN claim_expires_at_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhook_deliveries ADD COLUMN claimed_by TEXT;
CREATE UNIQUE INDEX send_transactions_one_pending_nonce ON send_transactions(caip2, from_address, nonce)
  WHERE status IN ('INITIALIZED', 'BROADCASTING');
`,
  },
  // --- end replicas ---
  // votes_one_per_voter (activity_id, user_id) serves every lookup by activity_id that
  // votes_activity did; one index fewer to update on the vote every activity inserts. The webhook
  // outbox asks, for every activity, whether any subscription or webhook feature exists at all: two
  // indexes answer that without scanning every organization's features and subscriptions.
  {
    version: 14,
    sql: `
DROP INDEX IF EXISTS votes_activity;
CREATE INDEX webhook_subscriptions_type ON webhook_subscriptions(event_type, is_active);
CREATE INDEX organization_features_name ON organization_features(name);
`,
  },
];

/** The newest migration's version: what a migrated store's schema is. */
export const SCHEMA_VERSION = Math.max(...MIGRATIONS.map((m) => m.version));
