/** Records the wallet service keeps, and the store interface both backends implement. */

export interface OrganizationRecord {
  readonly id: string;
  readonly name: string;
  readonly parentId: string | null;
  readonly rootQuorumThreshold: number;
  readonly createdAtMs: number;
}

export interface UserRecord {
  readonly id: string;
  readonly organizationId: string;
  readonly name: string;
  readonly email: string | null;
  readonly phoneNumber: string | null;
  readonly isRoot: boolean;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

export const API_KEY_CURVES = [
  'API_KEY_CURVE_P256',
  'API_KEY_CURVE_SECP256K1',
  'API_KEY_CURVE_ED25519',
] as const;
export type ApiKeyCurve = (typeof API_KEY_CURVES)[number];

export interface ApiKeyRecord {
  readonly id: string;
  readonly userId: string;
  readonly organizationId: string;
  readonly name: string;
  /** Compressed SEC1 hex (P-256, secp256k1) or raw 32-byte hex (ed25519), lower-case. */
  readonly publicKey: string;
  readonly curve: ApiKeyCurve;
  /** Absent for long-lived keys. */
  readonly expiresAtMs: number | null;
  readonly createdAtMs: number;
}

export interface AuthenticatorRecord {
  readonly id: string;
  readonly userId: string;
  readonly organizationId: string;
  readonly name: string;
  /** base64url credential id as the browser reports it. */
  readonly credentialId: string;
  /** Compressed P-256 public key, hex. */
  readonly publicKey: string;
  readonly createdAtMs: number;
}

export interface WalletRecord {
  readonly id: string;
  readonly organizationId: string;
  readonly name: string;
  /** The BIP-39 mnemonic sealed by the key vault (AAD = wallet id). */
  readonly sealedMnemonic: Uint8Array;
  readonly exported: boolean;
  readonly imported: boolean;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

export interface WalletAccountRecord {
  readonly id: string;
  readonly organizationId: string;
  readonly walletId: string;
  readonly curve: string;
  readonly pathFormat: 'PATH_FORMAT_BIP32';
  readonly path: string;
  readonly addressFormat: string;
  readonly address: string;
  /** Hex public key of the derived key (compressed for ECDSA curves). */
  readonly publicKey: string;
  /** The derived private key sealed by the vault (AAD = account id), so signing never re-derives. */
  readonly sealedKey: Uint8Array;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

export interface PrivateKeyRecord {
  readonly id: string;
  readonly organizationId: string;
  readonly name: string;
  readonly curve: string;
  readonly publicKey: string;
  readonly sealedKey: Uint8Array;
  readonly addresses: readonly { readonly format: string; readonly address: string }[];
  readonly tags: readonly string[];
  readonly exported: boolean;
  readonly imported: boolean;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

export const ACTIVITY_STATUSES = [
  'ACTIVITY_STATUS_CREATED',
  'ACTIVITY_STATUS_PENDING',
  'ACTIVITY_STATUS_COMPLETED',
  'ACTIVITY_STATUS_FAILED',
  'ACTIVITY_STATUS_CONSENSUS_NEEDED',
  'ACTIVITY_STATUS_REJECTED',
  'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED',
] as const;
export type ActivityStatus = (typeof ACTIVITY_STATUSES)[number];

export interface VoteRecord {
  readonly id: string;
  readonly activityId: string;
  readonly userId: string;
  readonly selection: 'VOTE_SELECTION_APPROVED' | 'VOTE_SELECTION_REJECTED';
  /** The raw stamped request body. */
  readonly message: string;
  readonly publicKey: string;
  readonly signature: string;
  readonly scheme: string;
  readonly createdAtMs: number;
}

export interface ActivityRecord {
  readonly id: string;
  readonly organizationId: string;
  readonly type: string;
  readonly status: ActivityStatus;
  /** `sha256:<hex>` of the raw request body. */
  readonly fingerprint: string;
  readonly intentKey: string;
  /** The submitted parameters, as JSON text. */
  readonly intentJson: string;
  readonly resultKey: string;
  /** The result object, as JSON text, or null before completion. */
  readonly resultJson: string | null;
  readonly failureJson: string | null;
  readonly timestampMs: string;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
  /**
   * The app proofs (a JSON array) when the request asked for them (`generateAppProofs`): `[]` while
   * the activity waits for consensus, filled when it completes; null/absent when not asked.
   */
  readonly appProofsJson?: string | null;
}

export const POLICY_EFFECT_VALUES = ['EFFECT_ALLOW', 'EFFECT_DENY'] as const;
export type PolicyEffectValue = (typeof POLICY_EFFECT_VALUES)[number];

export interface PolicyRecord {
  readonly id: string;
  readonly organizationId: string;
  readonly name: string;
  readonly effect: PolicyEffectValue;
  /** Expression source; null when absent (reads as true). */
  readonly condition: string | null;
  readonly consensus: string | null;
  readonly time: string | null;
  readonly notes: string;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

/** One run of the policy engine over an activity (at submission, or at a vote). */
export interface PolicyEvaluationRecord {
  readonly id: string;
  readonly activityId: string;
  readonly organizationId: string;
  /** The vote that triggered it (the submitter's first vote at submission). */
  readonly voteId: string | null;
  /** The decision for the request as a whole (OUTCOME_…). */
  readonly outcome: string;
  /** `[{policyId, outcome, error?}]` as JSON text. */
  readonly resultsJson: string;
  readonly createdAtMs: number;
}

/** What a later decision changes on an activity. */
export interface ActivityUpdate {
  readonly status: ActivityStatus;
  readonly resultJson: string | null;
  readonly failureJson: string | null;
  readonly updatedAtMs: number;
  /** Replaces the app proofs when given; absent keeps what is stored. */
  readonly appProofsJson?: string;
}

/** Writes run inside one transaction; every method is synchronous within it. */
export interface StoreTx {
  insertOrganization(r: OrganizationRecord): Promise<void>;
  insertUser(r: UserRecord): Promise<void>;
  insertApiKey(r: ApiKeyRecord): Promise<void>;
  insertAuthenticator(r: AuthenticatorRecord): Promise<void>;
  insertWallet(r: WalletRecord): Promise<void>;
  insertWalletAccount(r: WalletAccountRecord): Promise<void>;
  insertPrivateKey(r: PrivateKeyRecord): Promise<void>;
  insertActivity(r: ActivityRecord, votes: readonly VoteRecord[]): Promise<void>;
  insertVote(v: VoteRecord): Promise<void>;
  /**
   * Moves an activity on from `expected` (compare-and-set, so two deciders never both act);
   * returns false, changing nothing, if its status is no longer `expected`.
   */
  updateActivity(id: string, expected: ActivityStatus, update: ActivityUpdate): Promise<boolean>;
  insertPolicy(r: PolicyRecord): Promise<void>;
  /** Replaces a policy's fields; false if no such policy in the organization. */
  updatePolicy(r: PolicyRecord): Promise<boolean>;
  /** False if no such policy in the organization. */
  deletePolicy(organizationId: string, id: string): Promise<boolean>;
  getPolicy(organizationId: string, id: string): Promise<PolicyRecord | undefined>;
  /** True if another policy of the organization (not `exceptId`) has this name. */
  policyNameTaken(organizationId: string, name: string, exceptId?: string): Promise<boolean>;
  insertPolicyEvaluation(r: PolicyEvaluationRecord): Promise<void>;
  walletNameTaken(organizationId: string, name: string): Promise<boolean>;
  privateKeyNameTaken(organizationId: string, name: string): Promise<boolean>;
  walletAccountExists(walletId: string, curve: string, path: string, addressFormat: string): Promise<boolean>;
  getWallet(organizationId: string, id: string): Promise<WalletRecord | undefined>;
  /** Sets `exported`; false if no such wallet in the organization. */
  markWalletExported(organizationId: string, id: string, nowMs: number): Promise<boolean>;
  /** Sets `exported`; false if no such private key in the organization. */
  markPrivateKeyExported(organizationId: string, id: string, nowMs: number): Promise<boolean>;
  /** Deletes a wallet with its accounts (and their sealed keys); false if no such wallet. */
  deleteWallet(organizationId: string, id: string): Promise<boolean>;
  /** Inserts the key unless one with its id exists; returns the stored one either way. */
  insertServiceKeyIfAbsent(r: ServiceKeyRecord): Promise<ServiceKeyRecord>;
}

/** A key the service holds for itself (not a tenant's), sealed by the vault (AAD = id). */
export interface ServiceKeyRecord {
  readonly id: string;
  /** Uncompressed SEC1 public key, lower-case hex. */
  readonly publicKey: string;
  readonly sealedKey: Uint8Array;
  readonly createdAtMs: number;
}

/** A resolved signing key: the sealed key with how to use it. */
export interface SigningKeyRecord {
  readonly kind: 'wallet_account' | 'private_key';
  /** Vault AAD (the account or private key id). */
  readonly recordId: string;
  readonly organizationId: string;
  readonly curve: string;
  readonly publicKey: string;
  readonly sealedKey: Uint8Array;
  /** The address that matched, with its format; null when resolved by private key id. */
  readonly address: string | null;
  readonly addressFormat: string | null;
  readonly walletId: string | null;
  readonly privateKeyId: string | null;
}

export interface ListPage {
  readonly limit: number;
  readonly after?: string | undefined;
  readonly before?: string | undefined;
}

/** `list_activities`' `filterByStatus` / `filterByType`. */
export interface ActivityFilter {
  readonly statuses?: readonly ActivityStatus[] | undefined;
  readonly types?: readonly string[] | undefined;
}

export interface WriteOptions {
  /** Default true: resolve only once the commit is on disk. */
  readonly durable?: boolean;
  /**
   * Default false. True promises that `fn` changes nothing but the transaction's rows (no state
   * outside the database, or only state it sets the same way each time), so it may run again: a
   * store may then batch it with other such writes without isolating each from the others, and if
   * one of them fails, roll the batch back and run every write of it again, isolated (each `fn`
   * of that batch then runs twice; its outcome is the second run's).
   */
  readonly rerunnable?: boolean;
}

export interface Store {
  /**
   * Runs `fn` in a transaction that is durable when the promise resolves. With `durable: false`
   * the promise resolves once the transaction is committed and visible to every connection, before
   * it is known to be on disk; a later durable write makes it durable too (the log is ordered).
   * Only for a record nobody is answered from until a durable write follows it (the reservation
   * an activity takes before signing, completed by a durable write before the answer).
   */
  write<T>(fn: (tx: StoreTx) => Promise<T>, options?: WriteOptions): Promise<T>;
  /**
   * Resolves once every transaction committed so far is durable. A request that answers from
   * what it read (not from a durable write of its own) waits for this first, so it never reports
   * a commit that a power loss could still undo. Immediate when nothing is pending.
   */
  synced(): Promise<void>;
  /**
   * Runs `fn` while holding the deployment-wide lock (PostgreSQL: an advisory lock, so replicas
   * starting at once on an empty database initialize it once; SQLite: one process, in turn).
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * A value that changes whenever another connection (another process or replica) has committed
   * since the last call, read cheaply; absent where the engine cannot tell so. The read cache
   * (cache.ts) serves only stores that have it.
   */
  externalVersion?(): number;
  /** The oldest live top-level organization: the one `init` created. */
  getRootOrganization(): Promise<OrganizationRecord | undefined>;
  getOrganization(id: string): Promise<OrganizationRecord | undefined>;
  getUser(id: string): Promise<UserRecord | undefined>;
  listUsers(organizationId: string): Promise<UserRecord[]>;
  listApiKeys(userId: string): Promise<ApiKeyRecord[]>;
  /** API keys with this public key in any of the given organizations. */
  findApiKeys(publicKey: string, organizationIds: readonly string[]): Promise<ApiKeyRecord[]>;
  findAuthenticators(
    credentialId: string,
    organizationIds: readonly string[],
  ): Promise<AuthenticatorRecord[]>;
  getWallet(organizationId: string, id: string): Promise<WalletRecord | undefined>;
  listWallets(organizationId: string): Promise<WalletRecord[]>;
  getWalletAccountByAddress(
    organizationId: string,
    walletId: string,
    address: string,
  ): Promise<WalletAccountRecord | undefined>;
  getWalletAccountByPath(
    organizationId: string,
    walletId: string,
    path: string,
  ): Promise<WalletAccountRecord | undefined>;
  listWalletAccounts(
    organizationId: string,
    walletId: string | undefined,
    page: ListPage,
  ): Promise<WalletAccountRecord[]>;
  getPrivateKey(organizationId: string, id: string): Promise<PrivateKeyRecord | undefined>;
  listPrivateKeys(organizationId: string): Promise<PrivateKeyRecord[]>;
  /** signWith resolution: private key id, else address (case-insensitive) of a key or account. */
  resolveSigningKey(organizationId: string, signWith: string): Promise<SigningKeyRecord | undefined>;
  getActivity(organizationId: string, id: string): Promise<ActivityRecord | undefined>;
  getActivityByFingerprint(fingerprint: string): Promise<ActivityRecord | undefined>;
  listVotes(activityId: string): Promise<VoteRecord[]>;
  /** Newest first; `filter` keeps only the statuses and types it names (absent: all). */
  listActivities(organizationId: string, page: ListPage, filter?: ActivityFilter): Promise<ActivityRecord[]>;
  getPolicy(organizationId: string, id: string): Promise<PolicyRecord | undefined>;
  /** Oldest first. */
  listPolicies(organizationId: string): Promise<PolicyRecord[]>;
  /** Oldest first. */
  listPolicyEvaluations(activityId: string): Promise<PolicyEvaluationRecord[]>;
  getServiceKey(id: string): Promise<ServiceKeyRecord | undefined>;
  close(): Promise<void>;
}

// --- users ---
// Users, API keys, authenticators, OAuth providers, user tags and invitations (issue 4). The store
// interfaces are extended here by declaration merging so this area stays one block.

export interface UserTagRecord {
  readonly id: string;
  readonly organizationId: string;
  readonly name: string;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

export interface OAuthProviderRecord {
  readonly id: string;
  readonly userId: string;
  readonly organizationId: string;
  readonly name: string;
  readonly issuer: string;
  readonly audience: string;
  readonly subject: string;
  readonly createdAtMs: number;
}

export const INVITATION_ACCESS_TYPES = ['ACCESS_TYPE_WEB', 'ACCESS_TYPE_API', 'ACCESS_TYPE_ALL'] as const;
export type InvitationAccessType = (typeof INVITATION_ACCESS_TYPES)[number];

export interface InvitationRecord {
  readonly id: string;
  readonly organizationId: string;
  readonly receiverUserName: string;
  readonly receiverEmail: string;
  /** User tag ids. */
  readonly receiverUserTags: readonly string[];
  readonly accessType: InvitationAccessType;
  readonly senderUserId: string;
  readonly status: 'INVITATION_STATUS_CREATED' | 'INVITATION_STATUS_ACCEPTED' | 'INVITATION_STATUS_REVOKED';
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

export interface StoreTx {
  getUser(id: string): Promise<UserRecord | undefined>;
  /** Replaces a user's name, email and phone number; false if no such user in the organization. */
  updateUser(r: UserRecord): Promise<boolean>;
  /** Deletes a user with its API keys, authenticators, OAuth providers and tag memberships. */
  deleteUser(organizationId: string, id: string): Promise<boolean>;
  listApiKeysOfUser(userId: string): Promise<ApiKeyRecord[]>;
  /** True if an API key with this public key exists in the organization. */
  apiKeyPublicKeyTaken(organizationId: string, publicKey: string): Promise<boolean>;
  /** False if no such key of this user. */
  deleteApiKey(userId: string, id: string): Promise<boolean>;
  /** True if an authenticator with this credential id exists in the organization. */
  authenticatorCredentialTaken(organizationId: string, credentialId: string): Promise<boolean>;
  insertOAuthProvider(r: OAuthProviderRecord): Promise<void>;
  /** True if a user of the organization already has a provider with this (issuer, audience, subject). */
  oauthProviderTaken(
    organizationId: string,
    issuer: string,
    audience: string,
    subject: string,
  ): Promise<boolean>;
  insertUserTag(r: UserTagRecord): Promise<void>;
  getUserTag(organizationId: string, id: string): Promise<UserTagRecord | undefined>;
  userTagNameTaken(organizationId: string, name: string): Promise<boolean>;
  /** Replaces the tags of a user. */
  setUserTags(userId: string, tagIds: readonly string[]): Promise<void>;
  addUserToTag(tagId: string, userId: string): Promise<void>;
  insertInvitation(r: InvitationRecord): Promise<void>;
  /** False if no such invitation in the organization. */
  deleteInvitation(organizationId: string, id: string): Promise<boolean>;
}

export interface Store {
  /** Oldest first. */
  listUserTags(organizationId: string): Promise<UserTagRecord[]>;
  /** Tag ids of a user. */
  listUserTagIds(userId: string): Promise<string[]>;
  listAuthenticators(userId: string): Promise<AuthenticatorRecord[]>;
  listOAuthProviders(userId: string): Promise<OAuthProviderRecord[]>;
  getApiKey(organizationId: string, id: string): Promise<ApiKeyRecord | undefined>;
  /** Every API key of the organization's users, oldest first. */
  listApiKeysOfOrganization(organizationId: string): Promise<ApiKeyRecord[]>;
  getInvitation(organizationId: string, id: string): Promise<InvitationRecord | undefined>;
}
// --- end users ---

// --- other resources ---
// Smart contract interfaces, fiat on-ramp credentials, TVC deployments and organization features
// (issue 4), added to the store interfaces by declaration merging so this area stays one block.

export const SMART_CONTRACT_INTERFACE_TYPES = [
  'SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM',
  'SMART_CONTRACT_INTERFACE_TYPE_SOLANA',
] as const;
export type SmartContractInterfaceType = (typeof SMART_CONTRACT_INTERFACE_TYPES)[number];

export interface SmartContractInterfaceRecord {
  readonly id: string;
  readonly organizationId: string;
  readonly type: SmartContractInterfaceType;
  readonly address: string;
  /** The ABI (a JSON array) or IDL (a JSON object) as submitted. */
  readonly interfaceJson: string;
  readonly label: string;
  readonly notes: string;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

export const FIAT_ON_RAMP_PROVIDERS = [
  'FIAT_ON_RAMP_PROVIDER_COINBASE',
  'FIAT_ON_RAMP_PROVIDER_MOONPAY',
] as const;
export type FiatOnRampProvider = (typeof FIAT_ON_RAMP_PROVIDERS)[number];

export interface FiatOnRampCredentialRecord {
  readonly id: string;
  readonly organizationId: string;
  readonly provider: FiatOnRampProvider;
  readonly projectId: string | null;
  readonly publishableApiKey: string;
  /** Sealed by the vault (AAD = `<id>/encryptedSecretApiKey`). */
  readonly sealedSecretApiKey: Uint8Array;
  /** Sealed by the vault (AAD = `<id>/encryptedPrivateApiKey`); null when not given. */
  readonly sealedPrivateApiKey: Uint8Array | null;
  readonly sandboxMode: boolean;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

export const TVC_DEPLOYMENT_STATUSES = ['ACTIVE', 'DELETED'] as const;
export type TvcDeploymentStatus = (typeof TVC_DEPLOYMENT_STATUSES)[number];

export interface TvcDeploymentRecord {
  readonly id: string;
  readonly organizationId: string;
  readonly appId: string;
  readonly manifestId: string;
  readonly status: TvcDeploymentStatus;
  /** The validated create_tvc_deployment fields but the pull secret, as JSON text. */
  readonly specJson: string;
  /** Sealed by the vault (AAD = `<id>/pivotContainerEncryptedPullSecret`); null when not given. */
  readonly sealedPullSecret: Uint8Array | null;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

export interface OrganizationFeatureRecord {
  readonly organizationId: string;
  /** FEATURE_NAME_… */
  readonly name: string;
  readonly value: string;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

export interface StoreTx {
  insertSmartContractInterface(r: SmartContractInterfaceRecord): Promise<void>;
  /** True if the organization has an interface of this type for this address (any case for Ethereum). */
  smartContractInterfaceExists(
    organizationId: string,
    type: SmartContractInterfaceType,
    address: string,
  ): Promise<boolean>;
  /** False if no such interface in the organization. */
  deleteSmartContractInterface(organizationId: string, id: string): Promise<boolean>;
  insertFiatOnRampCredential(r: FiatOnRampCredentialRecord): Promise<void>;
  getFiatOnRampCredential(
    organizationId: string,
    id: string,
  ): Promise<FiatOnRampCredentialRecord | undefined>;
  /** True if another credential of the organization (not `exceptId`) has this provider and mode. */
  fiatOnRampCredentialTaken(
    organizationId: string,
    provider: FiatOnRampProvider,
    sandboxMode: boolean,
    exceptId?: string,
  ): Promise<boolean>;
  /** Replaces a credential's fields; false if no such credential in the organization. */
  updateFiatOnRampCredential(r: FiatOnRampCredentialRecord): Promise<boolean>;
  /** Deletes the credential with its sealed secrets; false if no such credential. */
  deleteFiatOnRampCredential(organizationId: string, id: string): Promise<boolean>;
  insertTvcDeployment(r: TvcDeploymentRecord): Promise<void>;
  getTvcDeployment(organizationId: string, id: string): Promise<TvcDeploymentRecord | undefined>;
  /** Moves a deployment from `expected` to `next` (compare-and-set); false if it was not `expected`. */
  setTvcDeploymentStatus(
    organizationId: string,
    id: string,
    expected: TvcDeploymentStatus,
    next: TvcDeploymentStatus,
    nowMs: number,
  ): Promise<boolean>;
  /** Sets (inserting or replacing) one feature of the organization. */
  setOrganizationFeature(organizationId: string, name: string, value: string, nowMs: number): Promise<void>;
  /** False if the organization does not have the feature. */
  removeOrganizationFeature(organizationId: string, name: string): Promise<boolean>;
  /** Ordered by name. */
  listOrganizationFeatures(organizationId: string): Promise<OrganizationFeatureRecord[]>;
}

export interface Store {
  getSmartContractInterface(
    organizationId: string,
    id: string,
  ): Promise<SmartContractInterfaceRecord | undefined>;
  /** Oldest first. */
  listSmartContractInterfaces(organizationId: string): Promise<SmartContractInterfaceRecord[]>;
  /** Oldest first. */
  listFiatOnRampCredentials(organizationId: string): Promise<FiatOnRampCredentialRecord[]>;
  getTvcDeployment(organizationId: string, id: string): Promise<TvcDeploymentRecord | undefined>;
  /** Oldest first; every app's when `appId` is undefined. */
  listTvcDeployments(organizationId: string, appId: string | undefined): Promise<TvcDeploymentRecord[]>;
  /** Ordered by name (the webhook issue reads FEATURE_NAME_WEBHOOK here). */
  listOrganizationFeatures(organizationId: string): Promise<OrganizationFeatureRecord[]>;
}
// --- end other resources ---

// --- sub-organizations and sessions ---
// Sub-organization listing, stamp_login session keys and used verification tokens (issue 4), added
// to the store interfaces by declaration merging so this area stays one block.

/** A stamp_login session: the API key row (with its expiry) is the credential; this marks it a login key. */
export interface LoginSessionRecord {
  readonly apiKeyId: string;
  readonly userId: string;
  readonly organizationId: string;
  readonly expiresAtMs: number;
  readonly createdAtMs: number;
}

export const SUB_ORGANIZATION_FILTER_TYPES = [
  'NAME',
  'USERNAME',
  'EMAIL',
  'PHONE_NUMBER',
  'PUBLIC_KEY',
  'CREDENTIAL_ID',
] as const;
export type SubOrganizationFilterType = (typeof SUB_ORGANIZATION_FILTER_TYPES)[number];

export interface StoreTx {
  insertLoginSession(r: LoginSessionRecord): Promise<void>;
  /** Deletes every login-session API key of the user; returns their ids. */
  deleteLoginSessionKeys(userId: string): Promise<string[]>;
  /** Records a verification token as used; false (nothing written) if it already was. */
  consumeVerificationToken(id: string, organizationId: string, nowMs: number): Promise<boolean>;
  /** True if a sub-organization of `parentId` already has this name. */
  subOrganizationNameTaken(parentId: string, name: string): Promise<boolean>;
}

export interface Store {
  /** Ids of the sub-organizations of `parentId`, ascending, optionally filtered. */
  listSubOrganizationIds(
    parentId: string,
    filter: { readonly type: SubOrganizationFilterType; readonly value: string } | undefined,
    page: ListPage,
  ): Promise<string[]>;
}
// --- end sub-organizations and sessions ---

// --- eth send transaction ---
// Send-status rows and the durable nonce allocator of eth_send_transaction (issue 5), added to the
// store interfaces by declaration merging so this area stays one block.

/** A send's life on chain (turnkey-api.md 6.4); INCLUDED and FAILED are terminal. */
export const SEND_TRANSACTION_STATUSES = ['INITIALIZED', 'BROADCASTING', 'INCLUDED', 'FAILED'] as const;
export type SendTransactionStatus = (typeof SEND_TRANSACTION_STATUSES)[number];

/**
 * How a send reaches the chain: DIRECT is one call the account signs and pays for itself; a batch
 * runs through the gas-station executor the account delegates to (EIP-7702), submitted by the
 * service's sponsor key (SPONSORED) or by the account itself (BATCH). GAP_FILL is the service's own
 * zero-value transfer that takes the nonce of a send refused before inclusion when later nonces had
 * already been handed out.
 */
export const SEND_KINDS = ['DIRECT', 'SPONSORED', 'BATCH', 'GAP_FILL'] as const;
export type SendKind = (typeof SEND_KINDS)[number];

export interface SendTransactionRecord {
  readonly id: string;
  readonly kind: SendKind;
  /** Lower-case 0x address whose calls run: `fromAddress` for DIRECT and BATCH, the user for SPONSORED. */
  readonly accountAddress: string;
  /** The batch's gas-station nonce (SPONSORED, BATCH); null for DIRECT. */
  readonly gasStationNonce: bigint | null;
  readonly organizationId: string;
  readonly activityId: string;
  readonly caip2: string;
  /** Lower-case 0x address of the transaction's signer (the sponsor for SPONSORED). */
  readonly fromAddress: string;
  readonly nonce: bigint;
  /** The signed bytes: every (re-)broadcast sends exactly these, so a request never gets a second nonce. */
  readonly signedTransaction: Uint8Array;
  /** keccak256 of the signed bytes, lower-case 0x hex. */
  readonly txHash: string;
  readonly status: SendTransactionStatus;
  readonly blockNumber: bigint | null;
  readonly errorMessage: string | null;
  /** A reverted send's `eth.revertChain` (send/revertChain.ts) as JSON. */
  readonly revertChainJson: string | null;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

/** One status a send took, and when (recorded in the write that moved it). */
export interface SendTransactionTransition {
  readonly status: SendTransactionStatus;
  readonly errorMessage: string | null;
  readonly atMs: number;
}

/** What the tracker changes on a send. */
export interface SendTransactionUpdate {
  readonly status: SendTransactionStatus;
  readonly blockNumber?: bigint | undefined;
  readonly errorMessage?: string | undefined;
  readonly revertChainJson?: string | undefined;
  readonly updatedAtMs: number;
}

export interface StoreTx {
  /**
   * Takes the next nonce of (caip2, address): max(chainPending, last allocated + 1), and records it
   * as taken. With `given` (the caller's own nonce) returns it and only moves the counter past it.
   */
  allocateNonce(
    caip2: string,
    address: string,
    chainPending: bigint,
    given: bigint | undefined,
  ): Promise<bigint>;
  /** The next nonce the allocator would hand out for (caip2, address), read inside the write. */
  nextNonce(caip2: string, address: string): Promise<bigint | undefined>;
  /** Gives `nonce` back if it is still the last one taken (nothing was allocated after it). */
  releaseNonce(caip2: string, address: string, nonce: bigint): Promise<boolean>;
  insertSendTransaction(r: SendTransactionRecord): Promise<void>;
  /** Moves a send on unless it is already terminal; false if it was (or does not exist). */
  updateSendTransaction(id: string, update: SendTransactionUpdate): Promise<boolean>;
}

export interface Store {
  getSendTransaction(organizationId: string, id: string): Promise<SendTransactionRecord | undefined>;
  getSendTransactionById(id: string): Promise<SendTransactionRecord | undefined>;
  /** Sends not yet terminal (INITIALIZED, BROADCASTING), oldest first. */
  listPendingSendTransactions(): Promise<SendTransactionRecord[]>;
  /** The next nonce the allocator would hand out for (caip2, address), not counting the chain. */
  getNextNonce(caip2: string, address: string): Promise<bigint | undefined>;
  /** Every status the send took, oldest first. */
  listSendTransactionTransitions(id: string): Promise<SendTransactionTransition[]>;
}
// --- end eth send transaction ---

// --- administration ---
// Renames, root quorum changes, deletions, private-key tags and verified contacts (issue 10), added
// to the store interfaces by declaration merging so this area stays one block.

export interface PrivateKeyTagRecord {
  readonly id: string;
  readonly organizationId: string;
  readonly name: string;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

/** A contact a user proved they hold (a verification token for that exact value). */
export const CONTACT_KINDS = ['EMAIL', 'PHONE_NUMBER'] as const;
export type ContactKind = (typeof CONTACT_KINDS)[number];

export interface StoreTx {
  /** False if no such (live) organization. */
  renameOrganization(id: string, name: string): Promise<boolean>;
  /** Makes exactly `userIds` the organization's root users and sets the threshold. */
  setRootQuorum(organizationId: string, threshold: number, userIds: readonly string[]): Promise<void>;
  listUsersOfOrganization(organizationId: string): Promise<UserRecord[]>;
  renameWallet(organizationId: string, id: string, name: string, nowMs: number): Promise<boolean>;
  getWalletAccount(organizationId: string, id: string): Promise<WalletAccountRecord | undefined>;
  /** Deletes one account (and its sealed key); false if no such account. */
  deleteWalletAccount(organizationId: string, id: string): Promise<boolean>;
  getPrivateKey(organizationId: string, id: string): Promise<PrivateKeyRecord | undefined>;
  /** Deletes a private key with its addresses (and its sealed key); false if no such key. */
  deletePrivateKey(organizationId: string, id: string): Promise<boolean>;
  renameUserTag(organizationId: string, id: string, name: string, nowMs: number): Promise<boolean>;
  removeUserFromTag(tagId: string, userId: string): Promise<void>;
  /** Deletes a user tag and its memberships; returns the users that carried it (null: no such tag). */
  deleteUserTag(organizationId: string, id: string): Promise<string[] | null>;
  insertPrivateKeyTag(r: PrivateKeyTagRecord): Promise<void>;
  privateKeyTagNameTaken(organizationId: string, name: string): Promise<boolean>;
  /** Adds the tag id to the key's tags (once). */
  tagPrivateKey(organizationId: string, privateKeyId: string, tagId: string, nowMs: number): Promise<void>;
  /** Removes the tag id from the key's tags. */
  untagPrivateKey(organizationId: string, privateKeyId: string, tagId: string, nowMs: number): Promise<void>;
  getPrivateKeyTag(organizationId: string, id: string): Promise<PrivateKeyTagRecord | undefined>;
  renamePrivateKeyTag(organizationId: string, id: string, name: string, nowMs: number): Promise<boolean>;
  /** Deletes the tag and takes it off every key; returns those keys' ids (null: no such tag). */
  deletePrivateKeyTag(organizationId: string, id: string, nowMs: number): Promise<string[] | null>;
  /** Records that the user holds `value` (compared case-insensitively for emails). */
  markContactVerified(userId: string, kind: ContactKind, value: string, nowMs: number): Promise<void>;
  /**
   * Marks a sub-organization deleted and removes its key material and credentials (wallets,
   * accounts, private keys, API keys, authenticators, OAuth providers, sessions). The activity
   * history stays, so the deleting activity itself remains readable to the parent.
   */
  deleteOrganization(id: string, nowMs: number): Promise<boolean>;
}

export interface Store {
  listPrivateKeyTags(organizationId: string): Promise<PrivateKeyTagRecord[]>;
  /** Sub-organizations of `parentId` with a user whose current `kind` contact is verified (and equals `value` when given). */
  listVerifiedSubOrganizationIds(
    parentId: string,
    filter: { readonly kind: ContactKind; readonly value: string | undefined } | undefined,
    page: ListPage,
  ): Promise<string[]>;
}
// --- end administration ---
// --- key and wallet import ---
// The one-time target keys of init_import_wallet / init_import_private_key (issue 10, turnkey-api.md
// 9.5), added to the store interfaces by declaration merging so this area stays one block.

export const IMPORT_TARGET_KINDS = ['WALLET', 'PRIVATE_KEY'] as const;
export type ImportTargetKind = (typeof IMPORT_TARGET_KINDS)[number];

/** A P-256 key a client encrypts one mnemonic or private key to; bound to a user and used once. */
export interface ImportTargetRecord {
  readonly id: string;
  readonly organizationId: string;
  readonly userId: string;
  /** Which init made it, so a wallet target cannot carry a private key or the reverse. */
  readonly kind: ImportTargetKind;
  /** Uncompressed SEC1 public key, lower-case hex (the `targetPublic` of the import bundle). */
  readonly publicKey: string;
  /** The private key sealed by the vault (AAD = target id); null once consumed. */
  readonly sealedKey: Uint8Array | null;
  readonly expiresAtMs: number;
  readonly createdAtMs: number;
  readonly consumedAtMs: number | null;
  /** The `encappedPublic` (lower-case hex) of the bundle that consumed it, to name a replay as one. */
  readonly consumedEnc: string | null;
}

export interface StoreTx {
  insertImportTarget(r: ImportTargetRecord): Promise<void>;
  /**
   * Drops the user's expired open targets, and every open target of (organization, user, kind) but
   * the newest `keep`; returns how many went.
   */
  pruneImportTargets(
    organizationId: string,
    userId: string,
    kind: ImportTargetKind,
    keep: number,
    nowMs: number,
  ): Promise<number>;
  /**
   * Marks an open, unexpired target as used by the bundle whose encapsulated key is `enc` and drops
   * its sealed key; false (nothing written) if it is gone, expired, already used, or another user's.
   */
  consumeImportTarget(
    organizationId: string,
    userId: string,
    id: string,
    enc: string,
    nowMs: number,
  ): Promise<boolean>;
}

export interface Store {
  /** Open (unconsumed, unexpired at `nowMs`) targets of the user in the organization, newest first. */
  listOpenImportTargets(organizationId: string, userId: string, nowMs: number): Promise<ImportTargetRecord[]>;
  /** The target of the organization a bundle with encapsulated key `enc` already consumed. */
  getImportTargetConsumedBy(organizationId: string, enc: string): Promise<ImportTargetRecord | undefined>;
}
// --- end key and wallet import ---

// --- webhooks ---
// Webhook endpoints, the delivery outbox with its attempts, and the webhook signing keys (issue 14),
// added to the store interfaces by declaration merging so this area stays one block.

/** The event types an endpoint may subscribe to (turnkey-api.md 11.1); others are refused. */
export const WEBHOOK_EVENT_TYPES = ['ACTIVITY_UPDATES', 'SEND_TRANSACTION_STATUS_UPDATES'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export interface WebhookSubscriptionRecord {
  readonly eventType: WebhookEventType;
  /** As submitted (opaque to us); null when not given. */
  readonly filtersJson: string | null;
  readonly isActive: boolean;
}

export interface WebhookEndpointRecord {
  readonly id: string;
  readonly organizationId: string;
  readonly url: string;
  readonly name: string;
  readonly isActive: boolean;
  readonly subscriptions: readonly WebhookSubscriptionRecord[];
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

/** Where a delivery goes: a webhook endpoint, or an organization's FEATURE_NAME_WEBHOOK URL. */
export const WEBHOOK_DELIVERY_SOURCES = ['ENDPOINT', 'FEATURE'] as const;
export type WebhookDeliverySource = (typeof WEBHOOK_DELIVERY_SOURCES)[number];

/** PENDING until a 2xx (DELIVERED) or a final answer or the retry window's end (FAILED). */
export const WEBHOOK_DELIVERY_STATES = ['PENDING', 'DELIVERED', 'FAILED'] as const;
export type WebhookDeliveryState = (typeof WEBHOOK_DELIVERY_STATES)[number];

/** One reported change; its id is the `X-Turnkey-Event-Id` every delivery of it carries. */
export interface WebhookEventRecord {
  readonly id: string;
  /** The organization the change happened in. */
  readonly organizationId: string;
  readonly eventType: WebhookEventType;
  /** The activity (or send) the event is about. */
  readonly subjectId: string;
  /** The subject's record as of the change, JSON (the body is rendered from it). */
  readonly snapshotJson: string;
  /** The body as first sent, so every retry sends the same bytes; null before the first attempt. */
  readonly bodyJson: string | null;
  readonly createdAtMs: number;
}

export interface WebhookDeliveryRecord {
  readonly id: string;
  /** Position in the outbox; within a lane, deliveries go in this order. */
  readonly seq: number;
  readonly eventId: string;
  readonly eventType: WebhookEventType;
  /** `endpoint:<id>` or `feature:<organizationId>`. */
  readonly lane: string;
  readonly source: WebhookDeliverySource;
  readonly endpointId: string | null;
  /** The organization that owns the endpoint or the feature (`X-Turnkey-Organization-Id`). */
  readonly ownerOrganizationId: string;
  readonly url: string;
  readonly state: WebhookDeliveryState;
  readonly attempts: number;
  readonly nextAttemptAtMs: number;
  readonly leaseUntilMs: number;
  /** Retries stop once this is older than the retry window (the event's time, or a re-delivery's). */
  readonly windowStartMs: number;
  readonly lastError: string | null;
  readonly deliveredAtMs: number | null;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

export const WEBHOOK_ATTEMPT_OUTCOMES = ['DELIVERED', 'RETRY', 'FAILED'] as const;
export type WebhookAttemptOutcome = (typeof WEBHOOK_ATTEMPT_OUTCOMES)[number];

export interface WebhookAttemptRecord {
  readonly deliveryId: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
  readonly startedAtMs: number;
  readonly latencyMs: number;
  /** The receiver's HTTP status; null when no answer came (network error, timeout, refusal). */
  readonly statusCode: number | null;
  readonly outcome: WebhookAttemptOutcome;
  /** Why it did not deliver (never a body); null on success. */
  readonly error: string | null;
  readonly signingKeyId: string | null;
}

/** What an attempt leaves on its delivery. */
export interface WebhookAttemptResult {
  readonly attempt: WebhookAttemptRecord;
  readonly state: WebhookDeliveryState;
  readonly nextAttemptAtMs: number;
  /** The rendered body, stored with the first attempt so retries resend the same bytes. */
  readonly bodyJson: string;
}

/** An Ed25519 key that signs deliveries; the newest unretired one signs, all recent ones are published. */
export interface WebhookSigningKeyRecord {
  /** The `kid` (and `X-Turnkey-Signature-Key-Id`); also the vault AAD of the sealed key. */
  readonly id: string;
  /** Raw 32-byte Ed25519 public key, lower-case hex. */
  readonly publicKey: string;
  readonly sealedKey: Uint8Array;
  readonly createdAtMs: number;
  readonly retiredAtMs: number | null;
}

export interface WebhookBacklog {
  /** Deliveries not yet delivered or failed. */
  readonly pending: number;
  /** When the oldest pending delivery that is due now became due; null when none is due. */
  readonly oldestDueAtMs: number | null;
  /** The earliest time any pending delivery is due (for the dispatcher's timer); null when none. */
  readonly nextDueAtMs: number | null;
}

export interface WebhookDeliveryFilter {
  readonly endpointId?: string | undefined;
  readonly state?: WebhookDeliveryState | undefined;
  readonly eventId?: string | undefined;
}

export interface StoreTx {
  insertWebhookEndpoint(r: WebhookEndpointRecord): Promise<void>;
  getWebhookEndpoint(organizationId: string, id: string): Promise<WebhookEndpointRecord | undefined>;
  countWebhookEndpoints(organizationId: string): Promise<number>;
  /**
   * Replaces an endpoint's url, name, active flag and subscriptions; pending deliveries follow a new
   * url. False if no such endpoint in the organization.
   */
  updateWebhookEndpoint(r: WebhookEndpointRecord): Promise<boolean>;
  /** Deletes the endpoint; its pending deliveries end FAILED (still readable). False if none. */
  deleteWebhookEndpoint(organizationId: string, id: string, nowMs: number): Promise<boolean>;
  /**
   * Records the activity's current state (read inside this transaction) as an event and queues one
   * delivery per receiver: ACTIVITY_UPDATES endpoints of its organization and of the parent, and,
   * when `created`, the FEATURE_NAME_WEBHOOK URLs of both. Returns the number of deliveries queued.
   */
  enqueueActivityEvent(activityId: string, created: boolean, nowMs: number): Promise<number>;
  /** Queues a SEND_TRANSACTION_STATUS_UPDATES event of a send to the billing organization's endpoints. */
  enqueueSendStatusEvent(sendId: string, nowMs: number): Promise<number>;
  /**
   * Leases up to `limit` due lane heads (the oldest pending delivery of each lane) not in
   * `busyLanes` until `leaseUntilMs`, and returns them.
   */
  claimWebhookDeliveries(
    nowMs: number,
    leaseUntilMs: number,
    limit: number,
    busyLanes: readonly string[],
    claimedBy?: string,
  ): Promise<WebhookDeliveryRecord[]>;
  /** Records an attempt on a leased delivery and moves the delivery on (its lease ends). */
  recordWebhookAttempt(result: WebhookAttemptResult): Promise<void>;
  /**
   * Leases up to `limit` pending deliveries of one lane in order, from its head, stopping at the first
   * that is not due or not free (the lane's runner sends them one after another).
   */
  claimWebhookLane(
    lane: string,
    nowMs: number,
    leaseUntilMs: number,
    limit: number,
    claimedBy?: string,
  ): Promise<WebhookDeliveryRecord[]>;
  /** Ends the leases of deliveries a lane claimed but did not send. */
  releaseWebhookDeliveries(ids: readonly string[]): Promise<void>;
  /** Queues a finished delivery again (same event id, a fresh retry window); undefined if none. */
  redeliverWebhook(
    ownerOrganizationIds: readonly string[],
    deliveryId: string,
    nowMs: number,
  ): Promise<WebhookDeliveryRecord | undefined>;
  /** Drops every lease (at start of the only dispatcher of an embedded store). */
  releaseWebhookLeases(): Promise<number>;
  insertWebhookSigningKey(r: WebhookSigningKeyRecord): Promise<void>;
  /** Retires every signing key but `keepId`. */
  retireWebhookSigningKeys(keepId: string, nowMs: number): Promise<number>;
}

export interface Store {
  /** Oldest first. */
  listWebhookEndpoints(organizationId: string): Promise<WebhookEndpointRecord[]>;
  getWebhookEndpoint(organizationId: string, id: string): Promise<WebhookEndpointRecord | undefined>;
  getWebhookEvent(id: string): Promise<WebhookEventRecord | undefined>;
  getWebhookDelivery(id: string): Promise<WebhookDeliveryRecord | undefined>;
  /** Deliveries to receivers the organization owns, newest first. */
  listWebhookDeliveries(
    ownerOrganizationId: string,
    filter: WebhookDeliveryFilter,
    page: ListPage,
  ): Promise<WebhookDeliveryRecord[]>;
  /** Oldest first. */
  listWebhookAttempts(deliveryId: string): Promise<WebhookAttemptRecord[]>;
  /** Oldest first. */
  listWebhookSigningKeys(): Promise<WebhookSigningKeyRecord[]>;
  webhookBacklog(nowMs: number): Promise<WebhookBacklog>;
}
// --- end webhooks ---

// --- auth proxy ---
// The auth proxy's per-organization configuration (with its sealed API key) and the OTPs the
// init_otp / verify_otp activities issue and check (issue 13). Codes are kept only as hashes.

export interface AuthProxyConfigRecord {
  readonly organizationId: string;
  /** What clients send as `X-Auth-Proxy-Config-Id`. */
  readonly configId: string;
  readonly enabled: boolean;
  /** The proxy's API-only user in the organization, its P-256 API key and the policy binding it. */
  readonly userId: string;
  readonly apiKeyId: string;
  /** The API key's private scalar, sealed by the key vault (AAD `auth-proxy/<configId>`). */
  readonly sealedApiKey: Uint8Array;
  readonly policyId: string;
  /** The operator's settings (allowedOrigins, otpLength, templates…), JSON. */
  readonly settingsJson: string;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

export interface OtpRecord {
  readonly id: string;
  readonly organizationId: string;
  readonly otpType: 'OTP_TYPE_EMAIL' | 'OTP_TYPE_SMS';
  /** Normalized contact (lower-case email, E.164 phone number). */
  readonly contact: string;
  /** SHA-256 over the id and the code; the code itself is never stored. */
  readonly codeHash: Uint8Array;
  readonly attempts: number;
  readonly expiresAtMs: number;
  /** Set when the right code was given (or the OTP was burnt by too many wrong ones). */
  readonly closedAtMs: number | null;
  readonly createdAtMs: number;
}

export interface StoreTx {
  /** Inserts or replaces the organization's proxy configuration. */
  putAuthProxyConfig(r: AuthProxyConfigRecord): Promise<void>;
  authProxyConfigInTx(organizationId: string): Promise<AuthProxyConfigRecord | undefined>;
  insertOtp(r: OtpRecord): Promise<void>;
  /** OTPs of the contact in the organization still open and unexpired at `nowMs`. */
  countLiveOtps(organizationId: string, contact: string, nowMs: number): Promise<number>;
  otpInTx(id: string): Promise<OtpRecord | undefined>;
  /** Records a check of the OTP: its attempt count and, when it is finished with, when. */
  updateOtpState(id: string, attempts: number, closedAtMs: number | null): Promise<void>;
}

export interface Store {
  getAuthProxyConfig(organizationId: string): Promise<AuthProxyConfigRecord | undefined>;
  getAuthProxyConfigById(configId: string): Promise<AuthProxyConfigRecord | undefined>;
}
// --- end auth proxy ---

// --- oauth ---
// OAuth logins (issue 13): who holds an OAuth provider, and removing one, added to the store
// interfaces by declaration merging so this area stays one block.
export interface StoreTx {
  /** Deletes one OAuth provider of a user; false if the user has no provider with this id. */
  deleteOAuthProvider(userId: string, id: string): Promise<boolean>;
}

export interface Store {
  /**
   * The users of `organizationId` and of its sub-organizations holding an OAuth provider with this
   * exact (issuer, audience, subject), oldest registration first (at most 100).
   */
  findOAuthProviderUsers(
    organizationId: string,
    issuer: string,
    audience: string,
    subject: string,
  ): Promise<{ readonly organizationId: string; readonly userId: string }[]>;
}
// --- end oauth ---

// --- replicas ---
// What several service replicas on one database coordinate through (issue 11): activity
// reservations (an activity recorded PENDING with a lease before anything is signed), the lease
// that lets one replica at a time decide a consensus activity, and leases on send rows so each is
// followed by one replica's tracker. Every lease expires, so a dead replica's work is taken over.

/** An activity with the lease a replica holds on it (null when none). */
export interface ActivityLease {
  readonly activity: ActivityRecord;
  readonly leaseOwner: string | null;
  readonly leaseExpiresAtMs: number | null;
}

export interface StoreTx {
  /**
   * Records the activity (with its votes) unless one with its fingerprint exists: the unique
   * fingerprint decides between concurrent submitters on any replica. The row carries a lease held
   * by `owner` until `leaseUntilMs`. True if this call inserted it.
   */
  reserveActivity(
    r: ActivityRecord,
    votes: readonly VoteRecord[],
    owner: string | null,
    leaseUntilMs: number,
  ): Promise<boolean>;
  /**
   * Takes the lease on an activity in `status` when it is free, expired (at `nowMs`) or already
   * `owner`'s; true if `owner` now holds it.
   */
  leaseActivity(
    id: string,
    status: ActivityStatus,
    owner: string,
    nowMs: number,
    leaseUntilMs: number,
  ): Promise<boolean>;
  /** Gives up `owner`'s lease on the activity, if it still holds it. */
  releaseActivityLease(id: string, owner: string): Promise<void>;
  /**
   * The activity row, locked until the commit where the engine has row locks (PostgreSQL:
   * `FOR UPDATE`; SQLite has one writer), with its lease.
   */
  lockActivity(id: string): Promise<ActivityLease | undefined>;
  /**
   * Moves a PENDING activity on whose lease `owner` still holds, ending the lease: one statement
   * that checks and changes (the row stays locked until the commit where the engine has row
   * locks). False, changing nothing, if the activity is no longer PENDING or another owner took it.
   */
  completeLeasedActivity(id: string, owner: string, update: ActivityUpdate): Promise<boolean>;
  /**
   * Removes a PENDING reservation `owner` still holds (its votes and policy evaluations with it):
   * what it reserved failed before anything was signed, so a retry starts afresh. False if the
   * lease was lost.
   */
  abandonActivity(id: string, owner: string): Promise<boolean>;
  /** Ends every activity lease (one-process engines at start: no other process can hold one). */
  expireActivityLeases(): Promise<number>;
  /**
   * Leases pending sends (INITIALIZED, BROADCASTING) for `owner` until `leaseUntilMs`: those
   * unclaimed, claimed by `owner`, or whose claim expired at `nowMs`. Rows another replica is
   * claiming right now are skipped (PostgreSQL `FOR UPDATE SKIP LOCKED`). Oldest nonces first.
   */
  claimPendingSendTransactions(
    owner: string,
    nowMs: number,
    leaseUntilMs: number,
    limit: number,
  ): Promise<SendTransactionRecord[]>;
  /** Claims one pending send for `owner` (free, its own, or expired at `nowMs`); true if it holds it. */
  claimSendTransaction(id: string, owner: string, nowMs: number, leaseUntilMs: number): Promise<boolean>;
  /** Ends `owner`'s claims on sends (a tracker that stops). */
  releaseSendClaims(owner: string): Promise<number>;
}

export interface Store {
  /** The engine: 'sqlite' serves one process; 'postgres' may have several replicas. */
  readonly engine: 'sqlite' | 'postgres';
  getActivityLease(fingerprint: string): Promise<ActivityLease | undefined>;
}
// --- end replicas ---
