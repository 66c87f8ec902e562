/** What an activity handler gets and gives back. */
import type { KeyVault } from '../keys/index.js';
import type { OrganizationRecord, Store, StoreTx, UserRecord } from '../store/types.js';
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
  readonly write?: (tx: StoreTx) => void;
}

export interface ActivityDefinition {
  /** The `type` constant, versioned. */
  readonly type: string;
  /** The `/public/v1/submit/<path>` it is accepted on. */
  readonly path: string;
  readonly intentKey: string;
  readonly resultKey: string;
  readonly run: (ctx: ActivityContext, params: Params) => Promise<ActivityOutcome>;
}
