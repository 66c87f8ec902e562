/** fast-check generators of valid Ethereum transactions (the model), shared by the property tests. */
import fc from 'fast-check';
import type { EthAuthorization, EthTransaction, EthTransactionFields, EthTxType } from '../../../chains/ethereum/index.js';

const U256 = (1n << 256n) - 1n;
const uint = (max: bigint) =>
  fc.oneof(fc.constantFrom(0n, 1n, 0x7fn, 0x80n, max), fc.bigInt({ min: 0n, max: 0xffffffffn }), fc.bigInt({ min: 0n, max }));
const bytes = (n: number) => fc.uint8Array({ minLength: n, maxLength: n });
const address = bytes(20);
const accessList = fc.array(fc.record({ address, storageKeys: fc.array(bytes(32), { maxLength: 3 }) }), { maxLength: 3 });
const blobHash = bytes(32).map((h) => {
  h[0] = 0x01;
  return h;
});
const authorization: fc.Arbitrary<EthAuthorization> = fc.record({
  chainId: uint(U256),
  address,
  nonce: uint((1n << 64n) - 1n),
  yParity: fc.integer({ min: 0, max: 255 }),
  r: uint(U256),
  s: uint(U256),
});

export const arbitraryTransaction: fc.Arbitrary<EthTransaction> = fc
  .record({
    type: fc.constantFrom<EthTxType>('legacy', 'eip2930', 'eip1559', 'eip4844', 'eip7702'),
    chainId: fc.bigInt({ min: 1n, max: U256 }),
    preEip155: fc.boolean(),
    nonce: uint((1n << 64n) - 2n),
    gasLimit: uint((1n << 64n) - 1n), // a uint64 in every client
    feeA: uint(U256),
    feeB: uint(U256),
    to: fc.option(address, { nil: null }),
    toRequired: address,
    value: uint(U256),
    data: fc.uint8Array({ maxLength: 120 }),
    accessList,
    maxFeePerBlobGas: uint(U256),
    blobVersionedHashes: fc.array(blobHash, { minLength: 1, maxLength: 4 }),
    authorizationList: fc.array(authorization, { minLength: 1, maxLength: 3 }),
  })
  .map((r): EthTransaction => {
    const base = { nonce: r.nonce, gasLimit: r.gasLimit, value: r.value, data: r.data };
    const [lo, hi] = r.feeA <= r.feeB ? [r.feeA, r.feeB] : [r.feeB, r.feeA];
    const fees = { maxFeePerGas: hi, maxPriorityFeePerGas: lo };
    switch (r.type) {
      case 'legacy':
        return { type: 'legacy', ...base, chainId: r.preEip155 ? undefined : r.chainId, gasPrice: r.feeA, to: r.to, accessList: [] };
      case 'eip2930':
        return { type: 'eip2930', ...base, chainId: r.chainId, gasPrice: r.feeA, to: r.to, accessList: r.accessList };
      case 'eip1559':
        return { type: 'eip1559', ...base, chainId: r.chainId, ...fees, to: r.to, accessList: r.accessList };
      case 'eip4844':
        return {
          type: 'eip4844',
          ...base,
          chainId: r.chainId,
          ...fees,
          to: r.toRequired,
          accessList: r.accessList,
          maxFeePerBlobGas: r.maxFeePerBlobGas,
          blobVersionedHashes: r.blobVersionedHashes,
        };
      case 'eip7702':
        return {
          type: 'eip7702',
          ...base,
          chainId: r.chainId,
          ...fees,
          to: r.toRequired,
          accessList: r.accessList,
          authorizationList: r.authorizationList,
        };
    }
  });

const FIELD_TYPE = {
  legacy: 'LEGACY',
  eip2930: 'EIP2930',
  eip1559: 'EIP1559',
  eip4844: 'EIP4844',
  eip7702: 'EIP7702',
} as const;

const lowerHex = (b: Uint8Array): string => `0x${Buffer.from(b).toString('hex')}`;
const dec = (v: bigint | undefined): string => (v === undefined ? '' : v.toString());
const be = (v: bigint): Uint8Array => new Uint8Array(Buffer.from(v.toString(16).padStart(64, '0'), 'hex'));

/** The gRPC fields a client would send for `tx`. */
export function fieldsOf(tx: EthTransaction): EthTransactionFields {
  return {
    type: FIELD_TYPE[tx.type],
    chainId: dec(tx.chainId),
    nonce: dec(tx.nonce),
    to: tx.to === null ? '' : lowerHex(tx.to),
    value: dec(tx.value),
    data: tx.data,
    gasLimit: dec(tx.gasLimit),
    gasPrice: dec(tx.gasPrice),
    maxFeePerGas: dec(tx.maxFeePerGas),
    maxPriorityFeePerGas: dec(tx.maxPriorityFeePerGas),
    accessList: tx.accessList.map((e) => ({ address: lowerHex(e.address), storageKeys: [...e.storageKeys] })),
    maxFeePerBlobGas: dec(tx.maxFeePerBlobGas),
    blobVersionedHashes: [...(tx.blobVersionedHashes ?? [])],
    authorizationList: (tx.authorizationList ?? []).map((a) => ({
      chainId: dec(a.chainId),
      address: lowerHex(a.address),
      nonce: dec(a.nonce),
      yParity: a.yParity,
      r: be(a.r),
      s: be(a.s),
    })),
    legacyWithoutChainId: tx.type === 'legacy' && tx.chainId === undefined,
  };
}
