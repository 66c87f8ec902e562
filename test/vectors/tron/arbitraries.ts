/** fast-check generators of canonical Tron transactions (the model, without its bytes). */
import fc from 'fast-check';
import { encodeFields, TRON_CONTRACT_TYPES, type ProtoField, type TronContract } from '../../../chains/tron/index.js';

type Body = Omit<import('../../../chains/tron/index.js').TronTransaction, 'rawData'>;

const INT64_MAX = (1n << 63n) - 1n;
const int64 = fc.oneof(fc.constant(0n), fc.bigInt({ min: 1n, max: INT64_MAX }), fc.bigInt({ min: 1n, max: 1n << 40n }));
const bytes = (max: number) => fc.uint8Array({ maxLength: max });
const nonEmpty = (max: number) => fc.uint8Array({ minLength: 1, maxLength: max });
export const tronAddressBytes = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => Uint8Array.of(0x41, ...b));

/** Unknown fields with numbers from `numbers`, sorted by number as a canonical message holds them. */
function unknownFields(numbers: fc.Arbitrary<number>): fc.Arbitrary<ProtoField[]> {
  const field = fc.oneof(
    fc.record({ field: numbers, wireType: fc.constant(0 as const), value: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }) }),
    fc.record({ field: numbers, wireType: fc.constant(1 as const), value: fc.uint8Array({ minLength: 8, maxLength: 8 }) }),
    fc.record({ field: numbers, wireType: fc.constant(2 as const), value: bytes(12) }),
    fc.record({ field: numbers, wireType: fc.constant(5 as const), value: fc.uint8Array({ minLength: 4, maxLength: 4 }) }),
  );
  return fc.array(field, { maxLength: 3 }).map((fs) => [...fs].sort((a, b) => a.field - b.field));
}

function scalar(out: ProtoField[], field: number, value: bigint | Uint8Array): void {
  if (typeof value === 'bigint') {
    if (value !== 0n) out.push({ field, wireType: 0, value });
  } else if (value.length > 0) out.push({ field, wireType: 2, value });
}

const transfer = fc
  .record({ owner: tronAddressBytes, to: tronAddressBytes, amount: int64 })
  .map(({ owner, to, amount }) => {
    const f: ProtoField[] = [];
    scalar(f, 1, owner);
    scalar(f, 2, to);
    scalar(f, 3, amount);
    return {
      type: TRON_CONTRACT_TYPES[1],
      value: encodeFields(f),
      parameter: { type: 'TransferContract' as const, ownerAddress: owner, toAddress: to, amount },
    };
  });

const trigger = fc
  .record({
    owner: tronAddressBytes,
    contract: tronAddressBytes,
    callValue: int64,
    data: bytes(72),
    callTokenValue: int64,
    tokenId: int64,
  })
  .map((p) => {
    const f: ProtoField[] = [];
    scalar(f, 1, p.owner);
    scalar(f, 2, p.contract);
    scalar(f, 3, p.callValue);
    scalar(f, 4, p.data);
    scalar(f, 5, p.callTokenValue);
    scalar(f, 6, p.tokenId);
    return {
      type: TRON_CONTRACT_TYPES.find((t) => t.name === 'TriggerSmartContract')!,
      value: encodeFields(f),
      parameter: {
        type: 'TriggerSmartContract' as const,
        ownerAddress: p.owner,
        contractAddress: p.contract,
        callValue: p.callValue,
        data: p.data,
        callTokenValue: p.callTokenValue,
        tokenId: p.tokenId,
      },
    };
  });

/** The contract types whose parameter is decoded in full (the rest stay opaque). */
const DECODED = new Set<string>([
  'TransferContract',
  'TriggerSmartContract',
  'FreezeBalanceV2Contract',
  'UnfreezeBalanceV2Contract',
  'DelegateResourceContract',
  'UnDelegateResourceContract',
  'AccountPermissionUpdateContract',
]);

const opaque = fc
  .record({
    type: fc.constantFrom(...TRON_CONTRACT_TYPES.filter((t) => !DECODED.has(t.name))),
    owner: tronAddressBytes,
    extra: nonEmpty(10),
  })
  .map(({ type, owner, extra }) => {
    const f: ProtoField[] = [{ field: type.ownerField, wireType: 2, value: owner }];
    f.push({ field: 7, wireType: 2, value: extra });
    return { type, value: encodeFields(f), parameter: { type: 'opaque' as const, ownerAddress: owner } };
  });

const contract: fc.Arbitrary<TronContract> = fc
  .record({
    body: fc.oneof(transfer, trigger, opaque),
    provider: bytes(4),
    contractName: bytes(6),
    permissionId: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 0x7fffffff })),
    parameterUnknownFields: unknownFields(fc.integer({ min: 3, max: 40 })),
    unknownFields: unknownFields(fc.integer({ min: 6, max: 1000 })),
  })
  .map(({ body, ...rest }) => ({ ...body, typeUrl: `type.googleapis.com/protocol.${body.type.name}`, ...rest }));

const RAW_KNOWN = new Set([1, 3, 4, 8, 9, 10, 11, 12, 14, 18]);

/** A canonical `Transaction.raw` model (exactly one contract, as java-tron requires). */
export const tronTransactionBody: fc.Arbitrary<Body> = fc.record({
  refBlockBytes: fc.uint8Array({ minLength: 2, maxLength: 2 }),
  refBlockNum: int64,
  refBlockHash: fc.uint8Array({ minLength: 8, maxLength: 8 }),
  expiration: fc.bigInt({ min: 1n, max: INT64_MAX }),
  auths: fc.array(bytes(10), { maxLength: 2 }),
  data: bytes(30),
  contract: contract.map((c) => [c]),
  scripts: bytes(6),
  timestamp: int64,
  feeLimit: int64,
  unknownFields: unknownFields(fc.integer({ min: 2, max: 60 }).filter((n) => !RAW_KNOWN.has(n))),
});
