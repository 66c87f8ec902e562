import { describe, expect, it } from 'vitest';
import { DEV_ADDRESS_0 } from '../../test/vectors/tempo/vectors.js';
import { describeTransaction } from './describeTransaction.js';
import { transactionFromFields } from './transactionFromFields.js';

const TOKEN = '0x20C0000000000000000000000000000000000001';
const transfer = Uint8Array.from(
  Buffer.from(`a9059cbb${'00'.repeat(12)}${'11'.repeat(20)}${'00'.repeat(31)}64`, 'hex'),
);

describe('describeTransaction', () => {
  it('gives the tempo.tx facts of a batch', () => {
    const tx = transactionFromFields({
      chainId: '42431',
      nonce: '3',
      nonceKey: '7',
      gasLimit: '300000',
      maxFeePerGas: '20000000000',
      maxPriorityFeePerGas: '1',
      calls: [
        { to: TOKEN, value: '', data: transfer },
        { to: '', value: '5', data: Uint8Array.of(0x60) },
      ],
      accessList: [],
      validBefore: '1700003600',
      validAfter: '',
      feeToken: TOKEN,
      sponsored: true,
    });
    expect(describeTransaction(tx, DEV_ADDRESS_0)).toEqual({
      chain_id: 42431n,
      from: DEV_ADDRESS_0.toLowerCase(),
      nonce: 3n,
      nonce_key: 7n,
      gas_limit: 300000n,
      max_fee_per_gas: 20000000000n,
      max_priority_fee_per_gas: 1n,
      fee_token: TOKEN.toLowerCase(),
      valid_before: 1700003600n,
      valid_after: 0n,
      sponsored: true,
      calls: [
        {
          to: TOKEN.toLowerCase(),
          value: 0n,
          input: `0x${Buffer.from(transfer).toString('hex')}`,
          function_signature: '0xa9059cbb',
        },
        { to: '', value: 5n, input: '0x60', function_signature: '' },
      ],
    });
  });
});
