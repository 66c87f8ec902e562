/** What an activity handler gets and gives back. */
import type { KeyVault } from '../keys/index.js';
import type { OrganizationRecord, Store, StoreTx, UserRecord } from '../store/types.js';
import type { BuildFactsInput } from '../policy/index.js';
import type { Params } from './params.js';

export interface ActivityContext {
  readonly store: Store;
  readonly vault: KeyVault;
  readonly organization: OrganizationRecord;
  readonly user: UserRecord;
  readonly activityId: string;
  readonly nowMs: number;
}

export interface ActivityOutcome {
  /** The result object placed under the activity's result key. */
  readonly result: Record<string, unknown>;
  /** State changes, run in the same transaction that records the activity. */
  readonly write?: (tx: StoreTx) => Promise<void>;
}

export interface ActivityDefinition {
  /** The `type` constant, versioned. */
  readonly type: string;
  /** The `/public/v1/submit/<path>` it is accepted on. */
  readonly path: string;
  readonly intentKey: string;
  readonly resultKey: string;
  readonly run: (ctx: ActivityContext, params: Params) => Promise<ActivityOutcome>;
  /**
   * What policies may read about this request beyond `activity` (the signer's wallet / private key /
   * account, the parsed transaction). Runs before the policy gate, so it also rejects input that
   * cannot be described (unknown signWith, malformed transaction) with the field named.
   */
  readonly facts?: (ctx: ActivityContext, params: Params) => Promise<ActivityFacts>;
  /**
   * Top-level parameters holding secrets: the handler seals them (sealSecretParams.ts) before the
   * intent and the first vote are recorded, and `facts`/`run` see the sealed tokens.
   */
  readonly secretParams?: readonly string[];
}

/** The policy facts an activity contributes (everything of BuildFactsInput but `activity`). */
export type ActivityFacts = Omit<BuildFactsInput, 'activity'> & {
  /**
   * The calls of a batch (eth_send_transaction V2 through the gas station), each judged as its own
   * transaction; when present, `transaction` is ignored.
   */
  readonly batch?: readonly NonNullable<BuildFactsInput['transaction']>[] | undefined;
};
