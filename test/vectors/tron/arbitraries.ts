/** fast-check generators of canonical Tron transactions (the model, without its bytes). */
import fc from 'fast-check';
import { encodeFields, TRON_CONTRACT_TYPES, type ProtoField, type TronContract } from '../../../chains/tron/index.js';
import { TRON_PERMISSION_TYPES, TRON_RESOURCES } from '../../../chains/tron/types.js';

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

const typeNamed = (name: string) => TRON_CONTRACT_TYPES.find((t) => t.name === name)!;
const resource = fc.constantFrom(...TRON_RESOURCES);
const resourceCode = (r: (typeof TRON_RESOURCES)[number]) => BigInt(TRON_RESOURCES.indexOf(r));

const freezing = fc
  .record({ freeze: fc.boolean(), owner: tronAddressBytes, amount: int64, resource })
  .map(({ freeze, owner, amount, resource: r }) => {
    const f: ProtoField[] = [];
    scalar(f, 1, owner);
    scalar(f, 2, amount);
    scalar(f, 3, resourceCode(r));
    const parameter = freeze
      ? { type: 'FreezeBalanceV2Contract' as const, ownerAddress: owner, frozenBalance: amount, resource: r }
      : { type: 'UnfreezeBalanceV2Contract' as const, ownerAddress: owner, unfreezeBalance: amount, resource: r };
    return { type: typeNamed(parameter.type), value: encodeFields(f), parameter };
  });

const delegation = fc
  .record({
    delegate: fc.boolean(),
    owner: tronAddressBytes,
    receiver: tronAddressBytes,
    resource,
    balance: int64,
    lock: fc.boolean(),
    lockPeriod: int64,
  })
  .map((p) => {
    const lock = p.delegate && p.lock;
    const lockPeriod = p.delegate ? p.lockPeriod : 0n;
    const f: ProtoField[] = [];
    scalar(f, 1, p.owner);
    scalar(f, 2, resourceCode(p.resource));
    scalar(f, 3, p.balance);
    scalar(f, 4, p.receiver);
    scalar(f, 5, lock ? 1n : 0n);
    scalar(f, 6, lockPeriod);
    const type = p.delegate ? ('DelegateResourceContract' as const) : ('UnDelegateResourceContract' as const);
    return {
      type: typeNamed(type),
      value: encodeFields(f),
      parameter: {
        type,
        ownerAddress: p.owner,
        resource: p.resource,
        balance: p.balance,
        receiverAddress: p.receiver,
        lock,
        lockPeriod,
      },
    };
  });

const permission = fc
  .record({
    type: fc.constantFrom(...TRON_PERMISSION_TYPES),
    id: fc.integer({ min: 0, max: 0x7fffffff }),
    permissionName: fc.string({ maxLength: 12 }),
    threshold: int64,
    parentId: fc.integer({ min: 0, max: 0x7fffffff }),
    operations: bytes(32),
    keys: fc.array(fc.record({ address: tronAddressBytes, weight: int64 }), { maxLength: 3 }),
  })
  .map((p) => {
    const f: ProtoField[] = [];
    scalar(f, 1, BigInt(TRON_PERMISSION_TYPES.indexOf(p.type)));
    scalar(f, 2, BigInt(p.id));
    scalar(f, 3, new TextEncoder().encode(p.permissionName));
    scalar(f, 4, p.threshold);
    scalar(f, 5, BigInt(p.parentId));
    scalar(f, 6, p.operations);
    for (const k of p.keys) {
      const kf: ProtoField[] = [];
      scalar(kf, 1, k.address);
      scalar(kf, 2, k.weight);
      f.push({ field: 7, wireType: 2, value: encodeFields(kf) });
    }
    return { bytes: encodeFields(f), model: p };
  });

const permissionUpdate = fc
  .record({
    owner: tronAddressBytes,
    ownerPermission: fc.option(permission, { nil: undefined }),
    witness: fc.option(permission, { nil: undefined }),
    actives: fc.array(permission, { maxLength: 2 }),
  })
  .map((p) => {
    const f: ProtoField[] = [];
    scalar(f, 1, p.owner);
    // Embedded messages are written even when empty.
    if (p.ownerPermission !== undefined) f.push({ field: 2, wireType: 2, value: p.ownerPermission.bytes });
    if (p.witness !== undefined) f.push({ field: 3, wireType: 2, value: p.witness.bytes });
    for (const a of p.actives) f.push({ field: 4, wireType: 2, value: a.bytes });
    return {
      type: typeNamed('AccountPermissionUpdateContract'),
      value: encodeFields(f),
      parameter: {
        type: 'AccountPermissionUpdateContract' as const,
        ownerAddress: p.owner,
        owner: p.ownerPermission?.model,
        witness: p.witness?.model,
        actives: p.actives.map((a) => a.model),
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
    body: fc.oneof(transfer, trigger, freezing, delegation, permissionUpdate, opaque),
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
