import { sha256 } from '@noble/hashes/sha2.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { tronTransactionBody } from '../../test/vectors/tron/arbitraries.js';
import {
  hex,
  invalidVectors,
  toHex,
  transactionVectors,
  tronWebProto,
} from '../../test/vectors/tron/vectors.js';
import { parseRawData } from './parseRawData.js';
import { encodeFields, type ProtoField } from './protobuf.js';
import { serializeRawData } from './serializeRawData.js';
import { txId } from './txId.js';

function errorOf(fn: () => unknown): CountersignError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(CountersignError);
    return e as CountersignError;
  }
  return expect.fail('expected a CountersignError');
}

function expectMalformed(
  fn: () => unknown,
  message: string,
  code: CountersignError['code'] = 'TRON_MALFORMED_TRANSACTION',
): void {
  const e = errorOf(fn);
  expect(e.code).toBe(code);
  expect(e.message).toMatch(/^failed to pre-parse Tron transaction: /);
  expect(e.message).toContain(message);
}

const len = (f: number, value: Uint8Array): ProtoField => ({ field: f, wireType: 2, value });
const vint = (f: number, value: bigint): ProtoField => ({ field: f, wireType: 0, value });
const url = (name: string) => new TextEncoder().encode(`type.googleapis.com/protocol.${name}`);
const OWNER = hex(`41${'f3'.repeat(20)}`);
const TO = hex(`41${'70'.repeat(20)}`);

/** A raw_data around one hand-built contract, to reach the nested checks. */
function rawWith(contract: ProtoField[]): Uint8Array {
  return encodeFields([
    len(1, hex('1a2b')),
    len(4, hex('0011223344556677')),
    vint(8, 1_700_000_060_000n),
    len(11, encodeFields(contract)),
  ]);
}
function transferContract(value: ProtoField[], type = 1n, typeName = 'TransferContract'): ProtoField[] {
  return [vint(1, type), len(2, encodeFields([len(1, url(typeName)), len(2, encodeFields(value))]))];
}

describe.each(transactionVectors.transactions)('parseRawData on tronweb-built $name', (v) => {
  const bytes = hex(v.rawDataHex);

  it('re-serializes byte-identically and keeps the exact bytes', () => {
    const tx = parseRawData(bytes);
    expect(toHex(tx.rawData)).toBe(v.rawDataHex);
    expect(toHex(serializeRawData(tx))).toBe(v.rawDataHex);
  });

  it("computes tronweb's txID", () => {
    expect(toHex(txId(parseRawData(bytes).rawData))).toBe(v.txID);
  });

  it('copies the input so later changes by the caller do not reach the transaction', () => {
    const mine = bytes.slice();
    const tx = parseRawData(mine);
    mine.fill(0);
    expect(toHex(tx.rawData)).toBe(v.rawDataHex);
  });
});

describe('parseRawData on hand-made invalid raw_data (test/vectors/tron/invalid.json)', () => {
  it.each(invalidVectors.rawData)('rejects $name', ({ hex: h, message }) => {
    expectMalformed(() => parseRawData(hex(h)), message);
  });
});

describe('parseRawData on nested fields', () => {
  const goodTransfer = [len(1, OWNER), len(2, TO), vint(3, 5n)];

  it('accepts a hand-built transfer', () => {
    const tx = parseRawData(rawWith(transferContract(goodTransfer)));
    expect(tx.contract[0]?.parameter).toEqual({
      type: 'TransferContract',
      ownerAddress: OWNER,
      toAddress: TO,
      amount: 5n,
    });
  });

  it('rejects an owner_address of 20 bytes', () =>
    expectMalformed(
      () => parseRawData(rawWith(transferContract([len(1, OWNER.subarray(1)), len(2, TO)]))),
      'contract[0].parameter.value.owner_address: must be a 21-byte address',
    ));
  it('rejects an owner_address without the 0x41 prefix', () =>
    expectMalformed(
      () =>
        parseRawData(
          rawWith(transferContract([len(1, Uint8Array.of(0xa0, ...OWNER.subarray(1))), len(2, TO)])),
        ),
      'owner_address: must be a 21-byte address starting with 0x41',
    ));
  it('rejects a duplicated to_address (protobuf would let the last one win)', () =>
    expectMalformed(
      () => parseRawData(rawWith(transferContract([len(1, OWNER), len(2, TO), len(2, OWNER)]))),
      'to_address: appears more than once',
    ));
  it('rejects an amount with the wrong wire type', () =>
    expectMalformed(
      () => parseRawData(rawWith(transferContract([len(1, OWNER), len(2, TO), len(3, hex('05'))]))),
      'amount: has wire type 2',
    ));
  it('rejects a negative amount', () =>
    expectMalformed(
      () => parseRawData(rawWith(transferContract([len(1, OWNER), len(2, TO), vint(3, (1n << 64n) - 1n)]))),
      'amount: must not be negative',
    ));
  it('rejects a transfer without owner_address', () =>
    expectMalformed(
      () => parseRawData(rawWith(transferContract([len(2, TO)]))),
      'owner_address: is required',
    ));
  it('rejects a trigger without contract_address', () =>
    expectMalformed(
      () => parseRawData(rawWith(transferContract([len(1, OWNER)], 31n, 'TriggerSmartContract'))),
      'contract_address: is required',
    ));
  it('rejects a contract without parameter', () =>
    expectMalformed(() => parseRawData(rawWith([vint(1, 1n)])), 'contract[0].parameter: is required'));
  it('rejects a parameter with the wrong wire type', () =>
    expectMalformed(() => parseRawData(rawWith([vint(1, 1n), vint(2, 1n)])), 'parameter: has wire type 0'));
  it('rejects a type_url that is not the protocol one', () =>
    expectMalformed(
      () =>
        parseRawData(
          rawWith([
            vint(1, 1n),
            len(2, encodeFields([len(1, new TextEncoder().encode('x/TransferContract'))])),
          ]),
        ),
      'type_url: must be type.googleapis.com/protocol.TransferContract',
    ));
  it('rejects GetContract, CustomContract and ShieldedTransferContract (no owner to bind)', () => {
    for (const n of [20n, 32n, 51n]) {
      expectMalformed(
        () => parseRawData(rawWith(transferContract(goodTransfer, n))),
        `contract type ${n} is not supported`,
        'TRON_UNSUPPORTED_CONTRACT_TYPE',
      );
    }
  });
  it('rejects an explicit Permission_id 0', () =>
    expectMalformed(
      () => parseRawData(rawWith([...transferContract(goodTransfer), vint(5, 0n)])),
      'Permission_id: explicitly encodes the default 0',
    ));
  it('rejects a negative Permission_id', () =>
    expectMalformed(
      () => parseRawData(rawWith([...transferContract(goodTransfer), vint(5, (1n << 64n) - 1n)])),
      'Permission_id: is not a non-negative 32-bit integer',
    ));
  it('decodes the owner of an opaque contract from its own field number (TransferAssetContract: 2)', () => {
    const value = [len(1, new TextEncoder().encode('1002000')), len(2, OWNER), len(3, TO), vint(4, 9n)];
    const tx = parseRawData(rawWith(transferContract(value, 2n, 'TransferAssetContract')));
    expect(tx.contract[0]?.parameter).toEqual({ type: 'opaque', ownerAddress: OWNER });
    expect(tx.contract[0]?.type.name).toBe('TransferAssetContract');
  });
  it('rejects an opaque contract without an owner', () =>
    expectMalformed(
      () => parseRawData(rawWith(transferContract([vint(2, 1n)], 56n, 'WithdrawExpireUnfreezeContract'))),
      'owner_address: is required',
    ));
});

describe('parseRawData on staking, delegation and permission contracts', () => {
  const delegate = (value: ProtoField[]) =>
    parseRawData(rawWith(transferContract(value, 57n, 'DelegateResourceContract')));
  const permissions = (value: ProtoField[]) =>
    parseRawData(rawWith(transferContract(value, 46n, 'AccountPermissionUpdateContract')));
  const key = (address: Uint8Array, weight: bigint) =>
    len(7, encodeFields([len(1, address), vint(2, weight)]));

  it('reads an unlocked delegation with the defaults it leaves out (BANDWIDTH, no lock)', () => {
    expect(delegate([len(1, OWNER), vint(3, 7n), len(4, TO)]).contract[0]?.parameter).toEqual({
      type: 'DelegateResourceContract',
      ownerAddress: OWNER,
      resource: 'BANDWIDTH',
      balance: 7n,
      receiverAddress: TO,
      lock: false,
      lockPeriod: 0n,
    });
  });
  it('rejects a resource code Tron does not define', () =>
    expectMalformed(
      () => delegate([len(1, OWNER), vint(2, 3n), len(4, TO)]),
      'contract[0].parameter.value.resource: 3 is not one of BANDWIDTH, ENERGY, TRON_POWER',
    ));
  it('rejects a lock encoded as anything but 1', () =>
    expectMalformed(
      () => delegate([len(1, OWNER), len(4, TO), vint(5, 2n)]),
      'lock: a bool must be encoded as 1',
    ));
  it('rejects a delegation without a receiver', () =>
    expectMalformed(() => delegate([len(1, OWNER), vint(3, 7n)]), 'receiver_address: is required'));
  it('rejects a negative frozen balance', () =>
    expectMalformed(
      () =>
        parseRawData(
          rawWith(
            transferContract([len(1, OWNER), vint(2, (1n << 64n) - 1n)], 54n, 'FreezeBalanceV2Contract'),
          ),
        ),
      'frozen_balance: must not be negative',
    ));
  it('reads each permission of a permission update, keys and all', () => {
    const owner = encodeFields([
      len(3, new TextEncoder().encode('owner')),
      vint(4, 2n),
      key(OWNER, 1n),
      key(TO, 1n),
    ]);
    const active = encodeFields([
      vint(1, 2n),
      vint(2, 2n),
      vint(4, 1n),
      len(6, new Uint8Array(32).fill(0xff)),
      key(TO, 1n),
    ]);
    const p = permissions([len(1, OWNER), len(2, owner), len(4, active), len(4, new Uint8Array(0))])
      .contract[0]?.parameter;
    expect(p).toEqual({
      type: 'AccountPermissionUpdateContract',
      ownerAddress: OWNER,
      owner: {
        type: 'Owner',
        id: 0,
        permissionName: 'owner',
        threshold: 2n,
        parentId: 0,
        operations: new Uint8Array(0),
        keys: [
          { address: OWNER, weight: 1n },
          { address: TO, weight: 1n },
        ],
      },
      witness: undefined,
      actives: [
        {
          type: 'Active',
          id: 2,
          permissionName: '',
          threshold: 1n,
          parentId: 0,
          operations: new Uint8Array(32).fill(0xff),
          keys: [{ address: TO, weight: 1n }],
        },
        {
          type: 'Owner',
          id: 0,
          permissionName: '',
          threshold: 0n,
          parentId: 0,
          operations: new Uint8Array(0),
          keys: [],
        },
      ],
    });
  });
  it('names the permission and key at fault', () => {
    const bad = encodeFields([key(OWNER, 1n), key(OWNER.subarray(1), 1n)]);
    expectMalformed(
      () => permissions([len(1, OWNER), len(4, encodeFields([])), len(4, bad)]),
      'contract[0].parameter.value.actives[1].keys[1].address: must be a 21-byte address',
    );
    expectMalformed(
      () => permissions([len(1, OWNER), len(2, encodeFields([len(3, Uint8Array.of(0xff))]))]),
      'contract[0].parameter.value.owner.permission_name: is not UTF-8',
    );
    expectMalformed(
      () => permissions([len(1, OWNER), len(3, encodeFields([vint(1, 5n)]))]),
      'witness.type: 5 is not one of Owner, Witness, Active',
    );
  });
});

describe('parseRawData with fields it does not know', () => {
  const v = transactionVectors.transactions[3]!; // TRC-20: every known field but data
  it('keeps unknown fields in place and re-serializes byte-identically', () => {
    const h = v.rawDataHex;
    // field 2 (unknown) between ref_block_bytes (1) and ref_block_hash (4); field 20 at the end.
    const withUnknown = hex(`${h.slice(0, 8)}1005${h.slice(8)}a00101a50104030201`);
    const tx = parseRawData(withUnknown);
    expect(tx.unknownFields.map((f) => f.field)).toEqual([2, 20, 20]);
    expect(toHex(serializeRawData(tx))).toBe(toHex(withUnknown));
    expect(toHex(txId(tx.rawData))).toBe(toHex(sha256(withUnknown)));
  });
});

describe('parseRawData properties', () => {
  it('parse(serialize(tx)) gives back tx, and serialize(parse(bytes)) gives back the bytes', () => {
    fc.assert(
      fc.property(tronTransactionBody, (body) => {
        const bytes = serializeRawData(body);
        const tx = parseRawData(bytes);
        expect({ ...tx, rawData: undefined }).toEqual({ ...body, rawData: undefined });
        expect(toHex(serializeRawData(tx))).toBe(toHex(bytes));
      }),
      { numRuns: 500 },
    );
  });

  it("re-serializes like tronweb's protobuf classes when no unknown fields are present", () => {
    // google-protobuf (in tronweb) reads int64 into a JS number: only compare where that is exact.
    const SAFE = BigInt(Number.MAX_SAFE_INTEGER);
    fc.assert(
      fc.property(tronTransactionBody, (body) => {
        fc.pre([body.refBlockNum, body.expiration, body.timestamp, body.feeLimit].every((n) => n <= SAFE));
        const plain = {
          ...body,
          // auths are opaque here (random bytes); tronweb decodes them as `authority` messages.
          auths: [],
          unknownFields: [],
          contract: body.contract.map((c) => ({ ...c, unknownFields: [], parameterUnknownFields: [] })),
        };
        const bytes = serializeRawData(plain);
        expect(toHex(tronWebProto.Transaction.raw.deserializeBinary(bytes).serializeBinary())).toBe(
          toHex(bytes),
        );
      }),
      { numRuns: 300 },
    );
  });

  it('never throws anything but CountersignError on random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        try {
          parseRawData(bytes);
        } catch (e) {
          expect(e).toBeInstanceOf(CountersignError);
        }
      }),
      { numRuns: 5000 },
    );
  });

  it('on single-byte corruptions of a valid raw_data either rejects or accepts bytes that re-serialize to themselves', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...transactionVectors.transactions),
        fc.nat(),
        fc.integer({ min: 0, max: 255 }),
        (v, at, byte) => {
          const bytes = hex(v.rawDataHex);
          bytes[at % bytes.length] = byte;
          let tx;
          try {
            tx = parseRawData(bytes);
          } catch (e) {
            expect(e).toBeInstanceOf(CountersignError);
            return;
          }
          expect(toHex(serializeRawData(tx))).toBe(toHex(bytes));
        },
      ),
      { numRuns: 3000 },
    );
  });
});
