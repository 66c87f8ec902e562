import { describe, expect, it } from 'vitest';
import { isCountersignError } from '../shared/errors.js';
import { statusOf } from './watch-send-transaction.js';

const ID = '0b6e1a52-3f0c-4a5e-9d43-6f1f2a8c9e11';
const HASH = `0x${'ab'.repeat(32)}`;

describe('statusOf', () => {
  it('reads each public API status with its hash and error', () => {
    expect(statusOf(ID, { txStatus: 'INITIALIZED' })).toEqual({
      sendTransactionStatusId: ID,
      status: 'SEND_TRANSACTION_STATUS_CODE_INITIALIZED',
      txHash: '',
      errorMessage: '',
    });
    expect(statusOf(ID, { txStatus: 'BROADCASTING' }).status).toBe(
      'SEND_TRANSACTION_STATUS_CODE_BROADCASTING',
    );
    expect(
      statusOf(ID, { txStatus: 'INCLUDED', eth: { txHash: HASH.toUpperCase().replace('0X', '0x') } }),
    ).toEqual({
      sendTransactionStatusId: ID,
      status: 'SEND_TRANSACTION_STATUS_CODE_INCLUDED',
      txHash: HASH,
      errorMessage: '',
    });
    expect(
      statusOf(ID, {
        txStatus: 'FAILED',
        eth: { txHash: HASH },
        error: { message: 'execution reverted: nope' },
      }),
    ).toMatchObject({
      status: 'SEND_TRANSACTION_STATUS_CODE_FAILED',
      errorMessage: 'execution reverted: nope',
    });
  });

  it.each([
    ['not an object', []],
    ['an unknown status', { txStatus: 'CANCELLED' }],
    ['no status', {}],
    ['a short hash', { txStatus: 'INCLUDED', eth: { txHash: '0xabcd' } }],
    ['a hash that is not a string', { txStatus: 'INCLUDED', eth: { txHash: 1 } }],
    ['an error message that is not a string', { txStatus: 'FAILED', error: { message: {} } }],
  ])('refuses %s as UPSTREAM_ERROR', (_, json) => {
    let code: string | undefined;
    try {
      statusOf(ID, json);
    } catch (e) {
      code = isCountersignError(e) ? e.code : 'not ours';
    }
    expect(code).toBe('UPSTREAM_ERROR');
  });
});
