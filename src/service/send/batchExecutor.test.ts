import { readFileSync } from 'node:fs';
import { keccak_256 } from '@noble/hashes/sha3.js';
import fc from 'fast-check';
import {
  decodeFunctionData,
  encodeAbiParameters,
  encodeErrorResult,
  getContractAddress,
  hashTypedData,
  keccak256,
  toHex,
  type Hex,
} from 'viem';
import { describe, expect, it } from 'vitest';
import artifact from '../../../contracts/build/CountersignBatchExecutor.json' with { type: 'json' };
import { COMPILER_SETTINGS, compileBatchExecutor, SOURCE_PATH } from '../../../scripts/build-contracts.js';
import { bytesTo0x, hexToBytes } from '../../shared/encoding.js';
import {
  BATCH_EXECUTOR_ABI,
  BATCH_EXECUTOR_INIT_CODE,
  BATCH_EXECUTOR_RUNTIME_CODE,
  BATCH_EXECUTOR_SALT,
  CREATE2_DEPLOYER,
  batchExecutionDigest,
  batchExecutionTypedData,
  batchExecutorAddress,
  create2DeployCalldata,
  decodeExecutorRevert,
  decodeNextNonceResult,
  delegationDesignator,
  encodeExecuteCalldata,
  encodeNextNonceCall,
  isDelegatedTo,
  type BatchCall,
} from './batchExecutor.js';

const UINT256_MAX = (1n << 256n) - 1n;

const addressArb = fc.uint8Array({ minLength: 20, maxLength: 20 });
const callArb: fc.Arbitrary<BatchCall> = fc.record({
  to: addressArb,
  value: fc.bigInt({ min: 0n, max: UINT256_MAX }),
  data: fc.uint8Array({ maxLength: 200 }),
});
const batchArb = fc.record({
  chainId: fc.bigInt({ min: 1n, max: (1n << 64n) - 1n }),
  account: addressArb,
  calls: fc.array(callArb, { minLength: 1, maxLength: 5 }),
  nonce: fc.bigInt({ min: 0n, max: UINT256_MAX }),
  deadline: fc.bigInt({ min: 0n, max: UINT256_MAX }),
});

const batchTypes = {
  BatchExecution: [
    { name: 'calls', type: 'Call[]' },
    { name: 'nonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
  ],
  Call: [
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'data', type: 'bytes' },
  ],
} as const;

/** The digest as viem computes it from the same fields (an independent EIP-712 implementation). */
function viemDigest(batch: {
  readonly chainId: bigint;
  readonly account: Uint8Array;
  readonly calls: readonly BatchCall[];
  readonly nonce: bigint;
  readonly deadline: bigint;
}): Hex {
  return hashTypedData({
    domain: {
      name: 'CountersignBatchExecutor',
      version: '1',
      chainId: batch.chainId,
      verifyingContract: bytesTo0x(batch.account),
    },
    types: batchTypes,
    primaryType: 'BatchExecution',
    message: {
      calls: batch.calls.map((c) => ({ to: bytesTo0x(c.to), value: c.value, data: bytesTo0x(c.data) })),
      nonce: batch.nonce,
      deadline: batch.deadline,
    },
  });
}

const someCall: BatchCall = { to: new Uint8Array(20).fill(0x22), value: 1n, data: Uint8Array.of(1, 2, 3) };
const someBatch = {
  chainId: 31337n,
  account: new Uint8Array(20).fill(0x11),
  calls: [someCall],
  nonce: 0n,
  deadline: 1_700_000_000n,
};

describe('artifact', () => {
  it('recompiling the Solidity source with the pinned solc reproduces the committed artifact', () => {
    const fresh = compileBatchExecutor();
    expect(fresh.bytecode).toBe(artifact.bytecode);
    expect(fresh.deployedBytecode).toBe(artifact.deployedBytecode);
    expect(fresh.abi).toEqual(artifact.abi);
    expect(fresh.sourceSha256).toBe(artifact.sourceSha256);
    expect(fresh.compiler).toEqual(artifact.compiler);
    expect(artifact.compiler.settings).toEqual(COMPILER_SETTINGS);
  });

  it('pins the same solc version in package.json and in the pragma', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    const pinned = pkg.devDependencies['solc'];
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    expect(readFileSync(SOURCE_PATH, 'utf8')).toContain(`pragma solidity ${pinned};`);
    expect(artifact.compiler.version.startsWith(`${pinned}+`)).toBe(true);
  });

  it('the ABI written out in TypeScript equals the artifact ABI', () => {
    expect(BATCH_EXECUTOR_ABI).toEqual(artifact.abi);
  });

  it('exposes the artifact code as bytes', () => {
    expect(bytesTo0x(BATCH_EXECUTOR_INIT_CODE)).toBe(artifact.bytecode);
    expect(bytesTo0x(BATCH_EXECUTOR_RUNTIME_CODE)).toBe(artifact.deployedBytecode);
    expect(BATCH_EXECUTOR_RUNTIME_CODE.length).toBeGreaterThan(100);
  });

  it('stores the nonce in the ERC-7201 slot of namespace countersign.batch-executor', () => {
    const id = BigInt(keccak256(toHex('countersign.batch-executor')));
    const slot = BigInt(keccak256(encodeAbiParameters([{ type: 'uint256' }], [id - 1n]))) & ~0xffn;
    const source = readFileSync(SOURCE_PATH, 'utf8');
    const declared = /STORAGE_SLOT = (0x[0-9a-f]{64});/.exec(source)?.[1];
    expect(declared).toBe(toHex(slot, { size: 32 }));
  });
});

describe('CREATE2 deployment', () => {
  it('batchExecutorAddress is the CREATE2 address viem computes for the deployer, zero salt and init code', () => {
    expect(BATCH_EXECUTOR_SALT).toEqual(new Uint8Array(32));
    const expected = getContractAddress({
      opcode: 'CREATE2',
      from: CREATE2_DEPLOYER,
      salt: bytesTo0x(BATCH_EXECUTOR_SALT),
      bytecode: bytesTo0x(BATCH_EXECUTOR_INIT_CODE),
    });
    expect(batchExecutorAddress()).toBe(expected.toLowerCase());
    expect(batchExecutorAddress()).toMatch(/^0x[0-9a-f]{40}$/);
  });

  it('deploy calldata is the salt followed by the init code', () => {
    const data = create2DeployCalldata();
    expect(data.subarray(0, 32)).toEqual(BATCH_EXECUTOR_SALT);
    expect(data.subarray(32)).toEqual(BATCH_EXECUTOR_INIT_CODE);
  });
});

describe('EIP-7702 delegation', () => {
  const executor = batchExecutorAddress();

  it('the designator is 0xef0100 followed by the executor address', () => {
    expect(bytesTo0x(delegationDesignator(executor))).toBe(`0xef0100${executor.slice(2)}`);
    expect(delegationDesignator(hexToBytes(executor, 'executor'))).toEqual(delegationDesignator(executor));
  });

  it('recognises code delegating to the executor and nothing else', () => {
    expect(isDelegatedTo(delegationDesignator(executor), executor)).toBe(true);
    expect(isDelegatedTo(new Uint8Array(0), executor)).toBe(false);
    expect(isDelegatedTo(delegationDesignator(`0x${'00'.repeat(20)}`), executor)).toBe(false);
    expect(isDelegatedTo(BATCH_EXECUTOR_RUNTIME_CODE, executor)).toBe(false);
    const longer = Uint8Array.of(...delegationDesignator(executor), 0);
    expect(isDelegatedTo(longer, executor)).toBe(false);
  });

  it('rejects an executor address that is not 20 bytes', () => {
    expect(() => delegationDesignator(new Uint8Array(19))).toThrow(/20 bytes/);
  });
});

describe('batchExecutionDigest', () => {
  it('equals viem hashTypedData over the same fields', () => {
    fc.assert(
      fc.property(batchArb, (batch) => {
        expect(bytesTo0x(batchExecutionDigest(batch))).toBe(viemDigest(batch));
      }),
      { numRuns: 200 },
    );
  });

  it('the typed-data JSON hashes (as plain JSON, with decimal strings) to the same digest', () => {
    fc.assert(
      fc.property(batchArb, (batch) => {
        const json = JSON.parse(JSON.stringify(batchExecutionTypedData(batch))) as Parameters<
          typeof hashTypedData
        >[0];
        expect(hashTypedData(json)).toBe(bytesTo0x(batchExecutionDigest(batch)));
      }),
      { numRuns: 50 },
    );
  });

  it('binds every field: changing any one changes the digest', () => {
    const base = bytesTo0x(batchExecutionDigest(someBatch));
    const variants = [
      { ...someBatch, chainId: 1n },
      { ...someBatch, account: new Uint8Array(20).fill(0x12) },
      { ...someBatch, nonce: 1n },
      { ...someBatch, deadline: 1_700_000_001n },
      { ...someBatch, calls: [{ ...someCall, value: 2n }] },
      { ...someBatch, calls: [{ ...someCall, data: Uint8Array.of(1, 2) }] },
      { ...someBatch, calls: [{ ...someCall, to: new Uint8Array(20).fill(0x23) }] },
      { ...someBatch, calls: [someCall, someCall] },
    ];
    const digests = new Set(variants.map((v) => bytesTo0x(batchExecutionDigest(v))));
    expect(digests.size).toBe(variants.length);
    expect(digests.has(base)).toBe(false);
  });

  it('accepts a number chain id and a hex account like their bigint and byte forms', () => {
    expect(batchExecutionDigest({ ...someBatch, chainId: 31337, account: `0x${'11'.repeat(20)}` })).toEqual(
      batchExecutionDigest(someBatch),
    );
  });

  it('refuses batches the contract would refuse or cannot encode', () => {
    expect(() => batchExecutionDigest({ ...someBatch, calls: [] })).toThrow(/1 to 50 calls/);
    expect(() => batchExecutionDigest({ ...someBatch, calls: Array(51).fill(someCall) })).toThrow(/got 51/);
    expect(() =>
      batchExecutionDigest({ ...someBatch, calls: [{ ...someCall, to: new Uint8Array(32) }] }),
    ).toThrow(/calls\[0\]\.to must be 20 bytes/);
    expect(() => batchExecutionDigest({ ...someBatch, calls: [{ ...someCall, value: -1n }] })).toThrow(
      /calls\[0\]\.value is outside uint256/,
    );
    expect(() => batchExecutionDigest({ ...someBatch, nonce: UINT256_MAX + 1n })).toThrow(/nonce/);
    expect(() => batchExecutionDigest({ ...someBatch, account: new Uint8Array(21) })).toThrow(/account/);
  });
});

describe('batchExecutionTypedData', () => {
  it('shows addresses and bytes as hex and integers as decimal strings', () => {
    const big = 2n ** 200n;
    expect(
      batchExecutionTypedData({
        ...someBatch,
        calls: [{ ...someCall, value: big }],
        nonce: 7n,
        deadline: big + 1n,
      }),
    ).toEqual({
      types: {
        EIP712Domain: [
          { name: 'name', type: 'string' },
          { name: 'version', type: 'string' },
          { name: 'chainId', type: 'uint256' },
          { name: 'verifyingContract', type: 'address' },
        ],
        ...batchTypes,
      },
      primaryType: 'BatchExecution',
      domain: {
        name: 'CountersignBatchExecutor',
        version: '1',
        chainId: '31337',
        verifyingContract: `0x${'11'.repeat(20)}`,
      },
      message: {
        calls: [{ to: `0x${'22'.repeat(20)}`, value: big.toString(), data: '0x010203' }],
        nonce: '7',
        deadline: (big + 1n).toString(),
      },
    });
  });
});

describe('calldata', () => {
  it('encodes execute so that viem decodes the same calls, nonce, deadline and signature', () => {
    fc.assert(
      fc.property(
        fc.array(callArb, { minLength: 1, maxLength: 4 }),
        fc.bigInt({ min: 0n, max: UINT256_MAX }),
        fc.bigInt({ min: 0n, max: UINT256_MAX }),
        fc.uint8Array({ minLength: 65, maxLength: 65 }),
        (calls, nonce, deadline, signature) => {
          const data = encodeExecuteCalldata({ calls, nonce, deadline, signature });
          const decoded = decodeFunctionData({ abi: BATCH_EXECUTOR_ABI, data: bytesTo0x(data) });
          expect(decoded.functionName).toBe('execute');
          expect(decoded.args).toEqual([
            calls.map((c) => ({ to: expect.stringMatching(/^0x/), value: c.value, data: bytesTo0x(c.data) })),
            nonce,
            deadline,
            bytesTo0x(signature),
          ]);
          const decodedCalls = decoded.args?.[0] as readonly { to: string }[];
          expect(decodedCalls.map((c) => c.to.toLowerCase())).toEqual(calls.map((c) => bytesTo0x(c.to)));
        },
      ),
      { numRuns: 50 },
    );
  });

  it('refuses a signature that is not 65 bytes', () => {
    expect(() =>
      encodeExecuteCalldata({ calls: [someCall], nonce: 0n, deadline: 0n, signature: new Uint8Array(64) }),
    ).toThrow(/65 bytes/);
  });

  it('nextNonce() calldata is its selector and its result decodes to a bigint', () => {
    expect(encodeNextNonceCall()).toEqual(keccak_256(new TextEncoder().encode('nextNonce()')).subarray(0, 4));
    expect(decodeNextNonceResult(`0x${'00'.repeat(31)}2a`)).toBe(42n);
    expect(decodeNextNonceResult(toHex(UINT256_MAX, { size: 32 }))).toBe(UINT256_MAX);
  });
});

describe('decodeExecutorRevert', () => {
  const callFailed = (index: bigint, reason: Hex): Hex =>
    encodeErrorResult({ abi: BATCH_EXECUTOR_ABI, errorName: 'CallFailed', args: [index, reason] });
  const errorString = (message: string): Hex =>
    encodeErrorResult({
      abi: [{ type: 'error', name: 'Error', inputs: [{ name: 'message', type: 'string' }] }],
      errorName: 'Error',
      args: [message],
    });
  const panic = (code: bigint): Hex =>
    encodeErrorResult({
      abi: [{ type: 'error', name: 'Panic', inputs: [{ name: 'code', type: 'uint256' }] }],
      errorName: 'Panic',
      args: [code],
    });

  it.each([
    [
      'DeadlineExpired',
      encodeErrorResult({ abi: BATCH_EXECUTOR_ABI, errorName: 'DeadlineExpired', args: [1700000000n] }),
      'batch deadline 1700000000 has passed',
    ],
    [
      'NonceAlreadyUsed',
      encodeErrorResult({ abi: BATCH_EXECUTOR_ABI, errorName: 'NonceAlreadyUsed', args: [3n, 6n] }),
      'gas-station nonce 3 was already used (next is 6)',
    ],
    [
      'InvalidSignature',
      encodeErrorResult({ abi: BATCH_EXECUTOR_ABI, errorName: 'InvalidSignature' }),
      'batch signature does not recover to the account',
    ],
    [
      'InvalidBatchSize',
      encodeErrorResult({ abi: BATCH_EXECUTOR_ABI, errorName: 'InvalidBatchSize', args: [51n] }),
      'batch of 51 calls is outside 1..50',
    ],
    [
      'CallFailed with Error(string)',
      callFailed(1n, errorString('not enough tokens')),
      'call 1 reverted: execution reverted: not enough tokens',
    ],
    [
      'CallFailed with Panic',
      callFailed(0n, panic(0x11n)),
      'call 0 reverted: execution reverted: panic 0x11',
    ],
    ['CallFailed with no data', callFailed(2n, '0x'), 'call 2 reverted: execution reverted'],
    [
      'CallFailed with a custom error',
      callFailed(0n, '0xdeadbeef0000000000000000000000000000000000000000000000000000000000000001'),
      'call 0 reverted: execution reverted: custom error 0xdeadbeef',
    ],
    [
      'CallFailed with a malformed Error(string)',
      callFailed(0n, '0x08c379a0ff'),
      'call 0 reverted: execution reverted: custom error 0x08c379a0',
    ],
  ] as const)('describes %s', (_, data, text) => {
    expect(decodeExecutorRevert(data)).toBe(text);
  });

  it('returns undefined for data that is not one of the executor errors', () => {
    expect(decodeExecutorRevert('0x')).toBeUndefined();
    expect(decodeExecutorRevert(errorString('plain revert'))).toBeUndefined();
    expect(decodeExecutorRevert(panic(1n))).toBeUndefined();
    // A known selector with a truncated payload is not one of ours either.
    const truncated = encodeErrorResult({
      abi: BATCH_EXECUTOR_ABI,
      errorName: 'NonceAlreadyUsed',
      args: [3n, 6n],
    });
    expect(decodeExecutorRevert(truncated.slice(0, 40) as Hex)).toBeUndefined();
  });

  it('never throws on random data', () => {
    const selectors = ['0x', '0x08c379a0', '0x4e487b71'].concat(
      BATCH_EXECUTOR_ABI.filter((e) => e.type === 'error').map((e) =>
        keccak256(toHex(`${e.name}(${e.inputs.map((i) => i.type).join(',')})`)).slice(0, 10),
      ),
    );
    fc.assert(
      fc.property(fc.constantFrom(...selectors), fc.uint8Array({ maxLength: 300 }), (selector, tail) => {
        const result = decodeExecutorRevert(`${selector}${bytesTo0x(tail).slice(2)}` as Hex);
        expect(result === undefined || typeof result === 'string').toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
