import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ActivityRecord, VoteRecord } from '../store/types.js';
import { activityResponse, activityResponseJson, userJson, type VoteWithUser } from './envelope.js';

const NOW = 1_700_000_000_123;

function record(over: Partial<ActivityRecord> = {}): ActivityRecord {
  return {
    id: randomUUID(),
    organizationId: randomUUID(),
    type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
    status: 'ACTIVITY_STATUS_COMPLETED',
    fingerprint: randomBytes(32).toString('hex'),
    intentKey: 'signTransactionIntentV2',
    intentJson: JSON.stringify({
      signWith: '0xabc',
      unsignedTransaction: '02f8' + randomBytes(40).toString('hex'),
      type: 'TRANSACTION_TYPE_ETHEREUM',
    }),
    resultKey: 'signTransactionResult',
    resultJson: JSON.stringify({ signedTransaction: '02f8' + randomBytes(60).toString('hex') }),
    failureJson: null,
    timestampMs: String(NOW - 5),
    createdAtMs: NOW,
    updatedAtMs: NOW + 7,
    ...over,
  };
}

function votes(a: ActivityRecord, n: number): VoteWithUser[] {
  return Array.from({ length: n }, (_, i) => {
    const vote: VoteRecord = {
      id: randomUUID(),
      activityId: a.id,
      userId: randomUUID(),
      selection: 'VOTE_SELECTION_APPROVED',
      message: JSON.stringify({ type: a.type, body: 'quote " and \\ and \u2028 and é' }),
      publicKey: '02' + randomBytes(32).toString('hex'),
      signature: randomBytes(70).toString('hex'),
      scheme: 'SIGNATURE_SCHEME_TK_API_P256',
      createdAtMs: NOW + i,
    };
    const user = userJson(
      {
        id: vote.userId,
        organizationId: a.organizationId,
        name: `user ${i}`,
        email: i % 2 === 0 ? null : `u${i}@example.com`,
        phoneNumber: null,
        createdAtMs: NOW,
        updatedAtMs: NOW,
      } as never,
      [],
    );
    return { vote, user };
  });
}

describe('activityResponseJson', () => {
  const cases: [string, ActivityRecord, number][] = [
    ['a completed activity with one vote', record(), 1],
    [
      'one awaiting consensus: no result, proofs requested, two votes',
      record({ status: 'ACTIVITY_STATUS_CONSENSUS_NEEDED', resultJson: null, appProofsJson: '[]' }),
      2,
    ],
    [
      'one with app proofs and a failure',
      record({
        status: 'ACTIVITY_STATUS_FAILED',
        appProofsJson: JSON.stringify([
          { scheme: 'SIGNATURE_SCHEME_EPHEMERAL_KEY_P256', proofPayload: '{"a":1}' },
        ]),
        failureJson: JSON.stringify({ code: 3, message: 'bad' }),
      }),
      1,
    ],
    ['one without votes, a result of an empty object', record({ resultJson: '{}' }), 0],
    [
      'a result whose JSON has nested arrays, numbers and unicode',
      record({ resultJson: JSON.stringify({ a: [1, 2.5, -0, 1e21, null], b: '☃\n\t', c: { d: true } }) }),
      1,
    ],
    ['a result key the nested copy would overwrite', record({ resultKey: 'activity' }), 1],
  ];
  it.each(cases)('is JSON.stringify(activityResponse(…)) to the byte: %s', (_, a, n) => {
    const v = votes(a, n);
    const fast = activityResponseJson(a, v);
    expect(fast).toBe(JSON.stringify(activityResponse(a, v)));
    // …and parses to the seed's shape, the nested copy at activity.result.activity.
    const parsed = JSON.parse(fast) as { activity: { result: { activity: { id: string } } } };
    expect(parsed.activity.result.activity.id).toBe(a.id);
  });
});
