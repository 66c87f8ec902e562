import { describe, expect, it } from 'vitest';
import { isCountersignError } from '../shared/errors.js';
import type { SendEthTransactionRequest } from './proto.js';
import { ethSendTransactionIntent, requestFieldOf } from './send-eth-transaction.js';

const FROM = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

/** A request as the loader decodes it: every proto3 field present, defaults filled in. */
function request(over: Partial<SendEthTransactionRequest> = {}): SendEthTransactionRequest {
  return {
    organizationId: '',
    from: FROM,
    idempotencyKey: '',
    caip2: 'eip155:1',
    calls: [{ to: TO, value: '', data: new Uint8Array(0) }],
    sponsor: false,
    nonce: '',
    gasLimit: '',
    maxFeePerGas: '',
    maxPriorityFeePerGas: '',
    deadline: '',
    gasStationNonce: '',
    ...over,
  };
}

function fieldOfFailure(over: Partial<SendEthTransactionRequest>): string | undefined {
  try {
    ethSendTransactionIntent(request(over));
  } catch (e) {
    if (isCountersignError(e)) return e.field;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('ethSendTransactionIntent', () => {
  it('leaves every unset field out, so the service chooses it', () => {
    expect(ethSendTransactionIntent(request())).toEqual({
      from: FROM,
      caip2: 'eip155:1',
      calls: [{ to: TO }],
    });
  });

  it('passes the sponsored-path fields and a batch through as given', () => {
    const intent = ethSendTransactionIntent(
      request({
        sponsor: true,
        calls: [
          { to: TO, value: '1', data: Uint8Array.of(0xab, 0xcd) },
          { to: FROM, value: '0', data: new Uint8Array(0) },
        ],
        nonce: '7',
        gasLimit: '90000',
        maxFeePerGas: '30000000000',
        maxPriorityFeePerGas: '1000000000',
        deadline: '1900000000',
        gasStationNonce: '3',
      }),
    );
    expect(JSON.stringify(intent)).toBe(
      JSON.stringify({
        from: FROM,
        caip2: 'eip155:1',
        calls: [
          { to: TO, value: '1', data: '0xabcd' },
          { to: FROM, value: '0' },
        ],
        sponsor: true,
        nonce: '7',
        gasLimit: '90000',
        maxFeePerGas: '30000000000',
        maxPriorityFeePerGas: '1000000000',
        deadline: '1900000000',
        gasStationNonce: '3',
      }),
    );
  });

  it.each([
    [{ caip2: 'eip155:01' }, 'caip2'],
    [{ caip2: 'eip155:' }, 'caip2'],
    [{ calls: Array.from({ length: 51 }, () => ({ to: TO, value: '', data: new Uint8Array(0) })) }, 'calls'],
    [{ calls: [{ to: '', value: '', data: new Uint8Array(0) }] }, 'calls[0].to'],
    [{ calls: [{ to: TO, value: '01', data: new Uint8Array(0) }] }, 'calls[0].value'],
    [{ calls: [{ to: TO, value: (1n << 256n).toString(), data: new Uint8Array(0) }] }, 'calls[0].value'],
    [{ nonce: (1n << 64n).toString() }, 'nonce'],
    [{ gasLimit: '-5' }, 'gas_limit'],
    [{ deadline: 'soon' }, 'deadline'],
    [{ gasStationNonce: '1.5' }, 'gas_station_nonce'],
  ] as [Partial<SendEthTransactionRequest>, string][])('refuses %j naming %s', (over, field) => {
    expect(fieldOfFailure(over)).toBe(field);
  });
});

describe('requestFieldOf', () => {
  it.each([
    ['parameters.caip2', 'caip2'],
    ['parameters.from', 'from'],
    ['parameters.calls', 'calls'],
    ['parameters.calls.0.to', 'calls[0].to'],
    ['parameters.calls.12.value', 'calls[12].value'],
    ['parameters.gasLimit', 'gas_limit'],
    ['parameters.maxPriorityFeePerGas', 'max_priority_fee_per_gas'],
    ['parameters.gasStationNonce', 'gas_station_nonce'],
  ])('names %s as %s', (path, field) => {
    expect(requestFieldOf(path)).toBe(field);
  });

  it('leaves paths outside parameters alone', () => {
    expect(requestFieldOf('organizationId')).toBeUndefined();
    expect(requestFieldOf('parameters')).toBeUndefined();
  });
});
