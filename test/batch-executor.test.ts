/**
 * The gas station's batch executor on a real Prague chain (anvil): deployed through the CREATE2
 * deployer, delegated to by a zero-balance EOA with EIP-7702, executing batches the EOA signed as
 * EIP-712 while a sponsor pays the gas, and refusing every batch it must refuse.
 */
import {
  createPublicClient,
  createWalletClient,
  decodeEventLog,
  encodeFunctionData,
  hashTypedData,
  http,
  parseEther,
  parseSignature,
  recoverAddress,
  serializeSignature,
  type Hex,
  type PublicClient,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import solc from 'solc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPILER_SETTINGS } from '../scripts/build-contracts.js';
import {
  BATCH_EXECUTOR_ABI,
  BATCH_EXECUTOR_RUNTIME_CODE,
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
} from '../src/service/send/batchExecutor.js';
import { bytesTo0x, hexToBytes } from '../src/shared/encoding.js';
import { startAnvil, type RunningAnvil } from './helpers/anvil.js';

// Anvil's default dev-mnemonic keys (public test fixtures): #0 deploys, #1 is the gas sponsor.
const DEPLOYER_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const SPONSOR_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
// ERC-7201 slot of namespace "countersign.batch-executor" (the unit test derives it from the formula).
const NONCE_SLOT = '0x6835220c8fe08283059256a0f06f656cb87cfd2e39a7de88bee3508b58724f00';

/** A target for inner calls: records who called it, or reverts with the reason it was given. */
const PROBE_SOURCE = `// SPDX-License-Identifier: Apache-2.0
pragma solidity ${solc.version().split('+')[0]};
contract Probe {
    event Seen(address indexed sender, uint256 value, bytes note);
    mapping(address => uint256) public callsFrom;
    function record(bytes calldata note) external payable {
        callsFrom[msg.sender] += 1;
        emit Seen(msg.sender, msg.value, note);
    }
    function fail(string calldata why) external pure {
        revert(why);
    }
}`;

const PROBE_ABI = [
  {
    type: 'event',
    name: 'Seen',
    inputs: [
      { name: 'sender', type: 'address', indexed: true },
      { name: 'value', type: 'uint256', indexed: false },
      { name: 'note', type: 'bytes', indexed: false },
    ],
    anonymous: false,
  },
  {
    type: 'function',
    name: 'callsFrom',
    stateMutability: 'view',
    inputs: [{ name: '', type: 'address' }],
    outputs: [{ name: '', type: 'uint256' }],
  },
  {
    type: 'function',
    name: 'record',
    stateMutability: 'payable',
    inputs: [{ name: 'note', type: 'bytes' }],
    outputs: [],
  },
  {
    type: 'function',
    name: 'fail',
    stateMutability: 'pure',
    inputs: [{ name: 'why', type: 'string' }],
    outputs: [],
  },
] as const;

function compileProbe(): Hex {
  const input = {
    language: 'Solidity',
    sources: { 'Probe.sol': { content: PROBE_SOURCE } },
    settings: { ...COMPILER_SETTINGS, outputSelection: { 'Probe.sol': { Probe: ['evm.bytecode.object'] } } },
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input)) as string) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: { 'Probe.sol': { Probe: { evm: { bytecode: { object: string } } } } };
  };
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  return `0x${out.contracts['Probe.sol'].Probe.evm.bytecode.object}`;
}

let anvil: RunningAnvil;
let publicClient: PublicClient;
let probe: Hex;
const user = privateKeyToAccount(generatePrivateKey());
const stranger = privateKeyToAccount(generatePrivateKey());
const deployer = privateKeyToAccount(DEPLOYER_KEY);
const sponsor = privateKeyToAccount(SPONSOR_KEY);
const executor = batchExecutorAddress();

function walletFor(account: PrivateKeyAccount) {
  return createWalletClient({ account, chain: foundry, transport: http(anvil.rpcUrl) });
}

async function rpc<T>(method: string, params: unknown[]): Promise<{ result?: T; error?: { data?: Hex } }> {
  const res = await fetch(anvil.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as { result?: T; error?: { data?: Hex } };
}

/** The raw revert data of an eth_call from the sponsor (undefined if the call succeeded). */
async function revertData(to: Hex, data: Uint8Array): Promise<Hex | undefined> {
  const answer = await rpc<Hex>('eth_call', [{ from: sponsor.address, to, data: bytesTo0x(data) }, 'latest']);
  if (answer.error === undefined) return undefined;
  expect(answer.error.data).toMatch(/^0x/);
  return answer.error.data;
}

async function nextNonceOf(account: Hex): Promise<bigint> {
  const answer = await rpc<Hex>('eth_call', [
    { to: account, data: bytesTo0x(encodeNextNonceCall()) },
    'latest',
  ]);
  return decodeNextNonceResult(answer.result as Hex);
}

async function deadlineIn(seconds: bigint): Promise<bigint> {
  const block = await publicClient.getBlock();
  return block.timestamp + seconds;
}

function recordCall(note: string): BatchCall {
  const data = encodeFunctionData({
    abi: PROBE_ABI,
    functionName: 'record',
    args: [bytesTo0x(new TextEncoder().encode(note))],
  });
  return { to: hexToBytes(probe, 'probe'), value: 0n, data: hexToBytes(data, 'record') };
}

function failCall(why: string): BatchCall {
  const data = encodeFunctionData({ abi: PROBE_ABI, functionName: 'fail', args: [why] });
  return { to: hexToBytes(probe, 'probe'), value: 0n, data: hexToBytes(data, 'fail') };
}

/** Signs a batch with viem's own EIP-712 implementation for `signer`, over `account`'s domain. */
async function signBatch(opts: {
  signer: PrivateKeyAccount;
  account: Hex;
  calls: BatchCall[];
  nonce: bigint;
  deadline: bigint;
}): Promise<Uint8Array> {
  const params = {
    chainId: foundry.id,
    account: opts.account,
    calls: opts.calls,
    nonce: opts.nonce,
    deadline: opts.deadline,
  };
  const typed = batchExecutionTypedData(params);
  const { EIP712Domain: _, ...types } = typed.types;
  const signature = await opts.signer.signTypedData({
    domain: { ...typed.domain, chainId: BigInt(typed.domain.chainId) },
    types,
    primaryType: 'BatchExecution',
    message: {
      calls: typed.message.calls.map((c) => ({ ...c, value: BigInt(c.value) })),
      nonce: BigInt(typed.message.nonce),
      deadline: BigInt(typed.message.deadline),
    },
  });
  return hexToBytes(signature, 'signature');
}

beforeAll(async () => {
  anvil = await startAnvil();
  publicClient = createPublicClient({ chain: foundry, transport: http(anvil.rpcUrl) });
  const hash = await walletFor(deployer).deployContract({ abi: PROBE_ABI, bytecode: compileProbe() });
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  probe = receipt.contractAddress as Hex;
});

afterAll(async () => {
  await anvil?.stop();
});

describe('CountersignBatchExecutor on anvil', () => {
  it('is deployed through the CREATE2 deployer at batchExecutorAddress with the artifact runtime code', async () => {
    expect((await publicClient.getCode({ address: CREATE2_DEPLOYER }))?.length ?? 0).toBeGreaterThan(2);
    expect(await publicClient.getCode({ address: executor })).toBeUndefined();
    const hash = await walletFor(deployer).sendTransaction({
      to: CREATE2_DEPLOYER,
      data: bytesTo0x(create2DeployCalldata()),
    });
    expect((await publicClient.waitForTransactionReceipt({ hash })).status).toBe('success');
    expect(await publicClient.getCode({ address: executor })).toBe(bytesTo0x(BATCH_EXECUTOR_RUNTIME_CODE));
  });

  it('a zero-balance EOA delegates with EIP-7702 and runs a 2-call batch the sponsor pays for', async () => {
    expect(await publicClient.getBalance({ address: user.address })).toBe(0n);
    const calls = [recordCall('first'), recordCall('second')];
    const deadline = await deadlineIn(3600n);
    const signature = await signBatch({ signer: user, account: user.address, calls, nonce: 0n, deadline });

    // viem's digest of the same typed data, and the signature's signer, agree with ours.
    const typed = batchExecutionTypedData({
      chainId: foundry.id,
      account: user.address,
      calls,
      nonce: 0n,
      deadline,
    });
    const ours = batchExecutionDigest({
      chainId: foundry.id,
      account: user.address,
      calls,
      nonce: 0n,
      deadline,
    });
    expect(hashTypedData(JSON.parse(JSON.stringify(typed)) as Parameters<typeof hashTypedData>[0])).toBe(
      bytesTo0x(ours),
    );
    expect(await recoverAddress({ hash: bytesTo0x(ours), signature: bytesTo0x(signature) })).toBe(
      user.address,
    );

    const authorization = await user.signAuthorization({ chainId: foundry.id, address: executor, nonce: 0 });
    const sponsorBefore = await publicClient.getBalance({ address: sponsor.address });
    const hash = await walletFor(sponsor).sendTransaction({
      to: user.address,
      data: bytesTo0x(encodeExecuteCalldata({ calls, nonce: 0n, deadline, signature })),
      authorizationList: [authorization],
    });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('success');
    expect(receipt.type).toBe('eip7702');

    const code = await publicClient.getCode({ address: user.address });
    expect(code).toBe(bytesTo0x(delegationDesignator(executor)));
    expect(isDelegatedTo(hexToBytes(code as Hex, 'code'), executor)).toBe(true);

    // Both inner calls ran with the user's address as msg.sender.
    const seen = receipt.logs
      .filter((log) => log.address.toLowerCase() === probe.toLowerCase())
      .map((log) => decodeEventLog({ abi: PROBE_ABI, data: log.data, topics: log.topics }).args);
    expect(seen.map((s) => [s.sender, new TextDecoder().decode(hexToBytes(s.note, 'note'))])).toEqual([
      [user.address, 'first'],
      [user.address, 'second'],
    ]);
    expect(
      await publicClient.readContract({
        address: probe,
        abi: PROBE_ABI,
        functionName: 'callsFrom',
        args: [user.address],
      }),
    ).toBe(2n);
    const executed = receipt.logs
      .filter((log) => log.address.toLowerCase() === user.address.toLowerCase())
      .map((log) => decodeEventLog({ abi: BATCH_EXECUTOR_ABI, data: log.data, topics: log.topics }));
    expect(executed).toEqual([{ eventName: 'BatchExecuted', args: { nonce: 0n, calls: 2n } }]);

    // The nonce moved, in the ERC-7201 slot of the user's own storage.
    expect(await nextNonceOf(user.address)).toBe(1n);
    expect(
      BigInt((await publicClient.getStorageAt({ address: user.address, slot: NONCE_SLOT })) ?? '0x0'),
    ).toBe(1n);

    // The user paid nothing; the sponsor paid exactly the gas.
    expect(await publicClient.getBalance({ address: user.address })).toBe(0n);
    const sponsorAfter = await publicClient.getBalance({ address: sponsor.address });
    expect(sponsorBefore - sponsorAfter).toBe(receipt.gasUsed * receipt.effectiveGasPrice);

    // Replaying the very same signed batch is refused.
    const replay = await revertData(
      user.address,
      encodeExecuteCalldata({ calls, nonce: 0n, deadline, signature }),
    );
    expect(decodeExecutorRevert(replay as Hex)).toBe('gas-station nonce 0 was already used (next is 1)');
  });

  it('refuses an expired deadline', async () => {
    const calls = [recordCall('late')];
    const deadline = (await deadlineIn(0n)) - 1n;
    const signature = await signBatch({ signer: user, account: user.address, calls, nonce: 1n, deadline });
    const data = await revertData(
      user.address,
      encodeExecuteCalldata({ calls, nonce: 1n, deadline, signature }),
    );
    expect(decodeExecutorRevert(data as Hex)).toBe(`batch deadline ${deadline} has passed`);
  });

  it('refuses a batch signed by another key', async () => {
    const calls = [recordCall('forged')];
    const deadline = await deadlineIn(3600n);
    const signature = await signBatch({
      signer: stranger,
      account: user.address,
      calls,
      nonce: 1n,
      deadline,
    });
    const data = await revertData(
      user.address,
      encodeExecuteCalldata({ calls, nonce: 1n, deadline, signature }),
    );
    expect(decodeExecutorRevert(data as Hex)).toBe('batch signature does not recover to the account');
  });

  it('refuses the high-s twin of a valid signature and accepts v as 0/1', async () => {
    const calls = [recordCall('malleable')];
    const deadline = await deadlineIn(3600n);
    const signature = await signBatch({ signer: user, account: user.address, calls, nonce: 1n, deadline });
    const execute = (sig: Hex) =>
      encodeExecuteCalldata({ calls, nonce: 1n, deadline, signature: hexToBytes(sig, 'signature') });

    const { r, s, yParity } = parseSignature(bytesTo0x(signature));
    const highS = `0x${(SECP256K1_N - BigInt(s)).toString(16).padStart(64, '0')}` as Hex;
    const twin = serializeSignature({ r, s: highS, yParity: yParity === 0 ? 1 : 0 });
    // The twin recovers to the user too: only the s ≤ n/2 rule (EIP-2) refuses it.
    expect(
      await recoverAddress({
        hash: bytesTo0x(
          batchExecutionDigest({ chainId: foundry.id, account: user.address, calls, nonce: 1n, deadline }),
        ),
        signature: twin,
      }),
    ).toBe(user.address);
    expect(decodeExecutorRevert((await revertData(user.address, execute(twin))) as Hex)).toBe(
      'batch signature does not recover to the account',
    );

    expect(await revertData(user.address, execute(bytesTo0x(signature)))).toBeUndefined();
    const rawV = Uint8Array.from(signature);
    rawV[64] = (rawV[64] as number) - 27;
    expect(await revertData(user.address, execute(bytesTo0x(rawV)))).toBeUndefined();
    rawV[64] = 29;
    expect(decodeExecutorRevert((await revertData(user.address, execute(bytesTo0x(rawV)))) as Hex)).toBe(
      'batch signature does not recover to the account',
    );
  });

  it('refuses empty and oversized batches', async () => {
    const deadline = await deadlineIn(3600n);
    const signature = new Uint8Array(65);
    for (const size of [0, 51]) {
      const calls = Array.from({ length: size }, () => recordCall('x'));
      const data = await revertData(
        user.address,
        encodeExecuteCalldata({ calls, nonce: 1n, deadline, signature }),
      );
      expect(decodeExecutorRevert(data as Hex)).toBe(`batch of ${size} calls is outside 1..50`);
    }
  });

  it('a failing inner call reverts the whole batch with its reason and consumes no nonce', async () => {
    const calls = [recordCall('before the failure'), failCall('probe says no')];
    const deadline = await deadlineIn(3600n);
    const signature = await signBatch({ signer: user, account: user.address, calls, nonce: 1n, deadline });
    const data = encodeExecuteCalldata({ calls, nonce: 1n, deadline, signature });
    expect(decodeExecutorRevert((await revertData(user.address, data)) as Hex)).toBe(
      'call 1 reverted: execution reverted: probe says no',
    );

    // Mined anyway (explicit gas skips estimation): reverted, the first call undone, the nonce untouched.
    const hash = await walletFor(sponsor).sendTransaction({
      to: user.address,
      data: bytesTo0x(data),
      gas: 300_000n,
    });
    expect((await publicClient.waitForTransactionReceipt({ hash })).status).toBe('reverted');
    expect(await nextNonceOf(user.address)).toBe(1n);
    expect(
      await publicClient.readContract({
        address: probe,
        abi: PROBE_ABI,
        functionName: 'callsFrom',
        args: [user.address],
      }),
    ).toBe(2n);
  });

  it('accepts a nonce gap, then refuses a lower nonce signed earlier', async () => {
    const deadline = await deadlineIn(3600n);
    const low = [recordCall('nonce 3')];
    const lowSignature = await signBatch({
      signer: user,
      account: user.address,
      calls: low,
      nonce: 3n,
      deadline,
    });
    const high = [recordCall('nonce 5')];
    const highSignature = await signBatch({
      signer: user,
      account: user.address,
      calls: high,
      nonce: 5n,
      deadline,
    });

    // Already delegated: a plain type-2 transaction to the user's address is enough.
    const hash = await walletFor(sponsor).sendTransaction({
      to: user.address,
      data: bytesTo0x(encodeExecuteCalldata({ calls: high, nonce: 5n, deadline, signature: highSignature })),
    });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('success');
    expect(receipt.type).toBe('eip1559');
    expect(await nextNonceOf(user.address)).toBe(6n);

    const data = await revertData(
      user.address,
      encodeExecuteCalldata({ calls: low, nonce: 3n, deadline, signature: lowSignature }),
    );
    expect(decodeExecutorRevert(data as Hex)).toBe('gas-station nonce 3 was already used (next is 6)');
    expect(await publicClient.getBalance({ address: user.address })).toBe(0n);
  });

  it('the delegated account still receives plain ETH and safe NFT transfers', async () => {
    const hash = await walletFor(sponsor).sendTransaction({ to: user.address, value: parseEther('0.5') });
    expect((await publicClient.waitForTransactionReceipt({ hash })).status).toBe('success');
    expect(await publicClient.getBalance({ address: user.address })).toBe(parseEther('0.5'));

    const read = (functionName: 'supportsInterface', id: Hex) =>
      publicClient.readContract({ address: user.address, abi: BATCH_EXECUTOR_ABI, functionName, args: [id] });
    expect(await read('supportsInterface', '0x01ffc9a7')).toBe(true);
    expect(await read('supportsInterface', '0x150b7a02')).toBe(true);
    expect(await read('supportsInterface', '0x4e2312e0')).toBe(true);
    expect(await read('supportsInterface', '0xffffffff')).toBe(false);
    expect(
      await publicClient.readContract({
        address: user.address,
        abi: BATCH_EXECUTOR_ABI,
        functionName: 'onERC721Received',
        args: [sponsor.address, sponsor.address, 1n, '0x'],
      }),
    ).toBe('0x150b7a02');
    expect(
      await publicClient.readContract({
        address: user.address,
        abi: BATCH_EXECUTOR_ABI,
        functionName: 'onERC1155Received',
        args: [sponsor.address, sponsor.address, 1n, 2n, '0x'],
      }),
    ).toBe('0xf23a6e61');
    expect(
      await publicClient.readContract({
        address: user.address,
        abi: BATCH_EXECUTOR_ABI,
        functionName: 'onERC1155BatchReceived',
        args: [sponsor.address, sponsor.address, [1n], [2n], '0x'],
      }),
    ).toBe('0xbc197c81');
  });

  it('refuses every batch when the executor contract is called directly', async () => {
    const calls = [recordCall('direct')];
    const deadline = await deadlineIn(3600n);
    // Signed for the executor's own domain and for the user's: neither recovers to the contract.
    for (const account of [executor, user.address]) {
      const signature = await signBatch({ signer: user, account, calls, nonce: 0n, deadline });
      const data = await revertData(
        executor,
        encodeExecuteCalldata({ calls, nonce: 0n, deadline, signature }),
      );
      expect(decodeExecutorRevert(data as Hex)).toBe('batch signature does not recover to the account');
    }
  });
});
