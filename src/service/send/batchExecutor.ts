/**
 * The gas station's batch executor (contracts/CountersignBatchExecutor.sol): its code and ABI, its
 * deterministic CREATE2 address, the EIP-7702 delegation designator, the EIP-712 digest a user signs
 * for a batch (computed here from the fields, never taken from a caller), the `execute` calldata, and
 * human text for the contract's revert data.
 */
import { keccak_256 } from '../../shared/keccak.js';
import { decodeAbiParameters, decodeFunctionResult, encodeFunctionData } from 'viem';
import artifact from '../../../contracts/build/CountersignBatchExecutor.json' with { type: 'json' };
import {
  bigintToFixed,
  bytesTo0x,
  concatBytes,
  equalBytes,
  hexToBytes,
  utf8,
} from '../../shared/encoding.js';

type Hex = `0x${string}`;

/** The executor's ABI, written out so viem infers types; a unit test holds it equal to the artifact's. */
export const BATCH_EXECUTOR_ABI = [
  {
    inputs: [
      {
        internalType: 'uint256',
        name: 'index',
        type: 'uint256',
      },
      {
        internalType: 'bytes',
        name: 'reason',
        type: 'bytes',
      },
    ],
    name: 'CallFailed',
    type: 'error',
  },
  {
    inputs: [
      {
        internalType: 'uint256',
        name: 'deadline',
        type: 'uint256',
      },
    ],
    name: 'DeadlineExpired',
    type: 'error',
  },
  {
    inputs: [
      {
        internalType: 'uint256',
        name: 'length',
        type: 'uint256',
      },
    ],
    name: 'InvalidBatchSize',
    type: 'error',
  },
  {
    inputs: [],
    name: 'InvalidSignature',
    type: 'error',
  },
  {
    inputs: [
      {
        internalType: 'uint256',
        name: 'nonce',
        type: 'uint256',
      },
      {
        internalType: 'uint256',
        name: 'nextNonce',
        type: 'uint256',
      },
    ],
    name: 'NonceAlreadyUsed',
    type: 'error',
  },
  {
    anonymous: false,
    inputs: [
      {
        indexed: true,
        internalType: 'uint256',
        name: 'nonce',
        type: 'uint256',
      },
      {
        indexed: false,
        internalType: 'uint256',
        name: 'calls',
        type: 'uint256',
      },
    ],
    name: 'BatchExecuted',
    type: 'event',
  },
  {
    inputs: [
      {
        components: [
          {
            internalType: 'address',
            name: 'to',
            type: 'address',
          },
          {
            internalType: 'uint256',
            name: 'value',
            type: 'uint256',
          },
          {
            internalType: 'bytes',
            name: 'data',
            type: 'bytes',
          },
        ],
        internalType: 'struct CountersignBatchExecutor.Call[]',
        name: 'calls',
        type: 'tuple[]',
      },
      {
        internalType: 'uint256',
        name: 'nonce',
        type: 'uint256',
      },
      {
        internalType: 'uint256',
        name: 'deadline',
        type: 'uint256',
      },
      {
        internalType: 'bytes',
        name: 'signature',
        type: 'bytes',
      },
    ],
    name: 'execute',
    outputs: [],
    stateMutability: 'payable',
    type: 'function',
  },
  {
    inputs: [],
    name: 'nextNonce',
    outputs: [
      {
        internalType: 'uint256',
        name: '',
        type: 'uint256',
      },
    ],
    stateMutability: 'view',
    type: 'function',
  },
  {
    inputs: [
      {
        internalType: 'address',
        name: '',
        type: 'address',
      },
      {
        internalType: 'address',
        name: '',
        type: 'address',
      },
      {
        internalType: 'uint256[]',
        name: '',
        type: 'uint256[]',
      },
      {
        internalType: 'uint256[]',
        name: '',
        type: 'uint256[]',
      },
      {
        internalType: 'bytes',
        name: '',
        type: 'bytes',
      },
    ],
    name: 'onERC1155BatchReceived',
    outputs: [
      {
        internalType: 'bytes4',
        name: '',
        type: 'bytes4',
      },
    ],
    stateMutability: 'pure',
    type: 'function',
  },
  {
    inputs: [
      {
        internalType: 'address',
        name: '',
        type: 'address',
      },
      {
        internalType: 'address',
        name: '',
        type: 'address',
      },
      {
        internalType: 'uint256',
        name: '',
        type: 'uint256',
      },
      {
        internalType: 'uint256',
        name: '',
        type: 'uint256',
      },
      {
        internalType: 'bytes',
        name: '',
        type: 'bytes',
      },
    ],
    name: 'onERC1155Received',
    outputs: [
      {
        internalType: 'bytes4',
        name: '',
        type: 'bytes4',
      },
    ],
    stateMutability: 'pure',
    type: 'function',
  },
  {
    inputs: [
      {
        internalType: 'address',
        name: '',
        type: 'address',
      },
      {
        internalType: 'address',
        name: '',
        type: 'address',
      },
      {
        internalType: 'uint256',
        name: '',
        type: 'uint256',
      },
      {
        internalType: 'bytes',
        name: '',
        type: 'bytes',
      },
    ],
    name: 'onERC721Received',
    outputs: [
      {
        internalType: 'bytes4',
        name: '',
        type: 'bytes4',
      },
    ],
    stateMutability: 'pure',
    type: 'function',
  },
  {
    inputs: [
      {
        internalType: 'bytes4',
        name: 'interfaceId',
        type: 'bytes4',
      },
    ],
    name: 'supportsInterface',
    outputs: [
      {
        internalType: 'bool',
        name: '',
        type: 'bool',
      },
    ],
    stateMutability: 'pure',
    type: 'function',
  },
  {
    stateMutability: 'payable',
    type: 'receive',
  },
] as const;

/** Creation code from the committed artifact (the constructor takes no arguments). */
export const BATCH_EXECUTOR_INIT_CODE: Uint8Array = hexToBytes(artifact.bytecode, 'artifact.bytecode');
/** The code an account delegating to the executor runs. */
export const BATCH_EXECUTOR_RUNTIME_CODE: Uint8Array = hexToBytes(
  artifact.deployedBytecode,
  'artifact.deployedBytecode',
);

/**
 * Arachnid's deterministic deployment proxy: calldata = salt(32) ‖ initcode, it CREATE2s and returns
 * the 20-byte address. Present at this address on anvil and on most EVM chains.
 */
export const CREATE2_DEPLOYER = '0x4e59b44847b379578588920ca78fbf26c0b4956c';

/** The executor is deployed with a zero salt: one address per code, the same on every chain. */
export const BATCH_EXECUTOR_SALT: Uint8Array = new Uint8Array(32);

/** An address as 20 bytes or as `0x` hex. */
export type AddressInput = Uint8Array | Hex;

/** One call of a batch, run from the user's account. */
export interface BatchCall {
  readonly to: Uint8Array;
  readonly value: bigint;
  readonly data: Uint8Array;
}

/** The fields a user signs for a sponsored batch (EIP-712 `BatchExecution`). */
export interface BatchExecutionParams {
  /** EIP-155 chain id of the chain the batch runs on (EIP-712 domain `chainId`). */
  readonly chainId: bigint | number;
  /** The delegating EOA: under EIP-7702 it is the domain's `verifyingContract`. */
  readonly account: AddressInput;
  readonly calls: readonly BatchCall[];
  /** Gas-station nonce: at least the account's `nextNonce()`; gaps are allowed. */
  readonly nonce: bigint;
  /** Unix time in seconds after which the contract refuses the batch. */
  readonly deadline: bigint;
}

/** The batch limits the contract enforces (`InvalidBatchSize`). */
export const MAX_BATCH_CALLS = 50;

const UINT256_LIMIT = 1n << 256n;
const DELEGATION_PREFIX = Uint8Array.of(0xef, 0x01, 0x00);

const DOMAIN_NAME = 'CountersignBatchExecutor';
const DOMAIN_VERSION = '1';
const DOMAIN_TYPEHASH = keccak_256(
  utf8('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)'),
);
const NAME_HASH = keccak_256(utf8(DOMAIN_NAME));
const VERSION_HASH = keccak_256(utf8(DOMAIN_VERSION));
const CALL_TYPE = 'Call(address to,uint256 value,bytes data)';
const CALL_TYPEHASH = keccak_256(utf8(CALL_TYPE));
// EIP-712 encodeType: the primary type, then referenced struct types sorted by name.
const BATCH_TYPEHASH = keccak_256(
  utf8(`BatchExecution(Call[] calls,uint256 nonce,uint256 deadline)${CALL_TYPE}`),
);

function addressBytes(value: AddressInput, field: string): Uint8Array {
  const bytes = typeof value === 'string' ? hexToBytes(value, field) : value;
  if (bytes.length !== 20) throw new TypeError(`${field} must be 20 bytes, got ${bytes.length}`);
  return bytes;
}

/** One ABI word of an unsigned integer (uint256). */
function uintWord(value: bigint, field: string): Uint8Array {
  if (value < 0n || value >= UINT256_LIMIT) throw new RangeError(`${field} is outside uint256`);
  return bigintToFixed(value, 32);
}

/** One ABI word of an address: 12 zero bytes, then the address. */
function addressWord(address: Uint8Array): Uint8Array {
  return concatBytes(new Uint8Array(12), address);
}

const BATCH_EXECUTOR_ADDRESS: Hex = bytesTo0x(
  keccak_256(
    concatBytes(
      Uint8Array.of(0xff),
      hexToBytes(CREATE2_DEPLOYER, 'CREATE2_DEPLOYER'),
      BATCH_EXECUTOR_SALT,
      keccak_256(BATCH_EXECUTOR_INIT_CODE),
    ),
  ).subarray(12),
);

/** The executor's CREATE2 address through `CREATE2_DEPLOYER` with a zero salt, lower-case. */
export function batchExecutorAddress(): Hex {
  return BATCH_EXECUTOR_ADDRESS;
}

/** Calldata for `CREATE2_DEPLOYER` that deploys the executor at `batchExecutorAddress()`. */
export function create2DeployCalldata(): Uint8Array {
  return concatBytes(BATCH_EXECUTOR_SALT, BATCH_EXECUTOR_INIT_CODE);
}

/** The code EIP-7702 installs in a delegating account: 0xef0100 ‖ executor address. */
export function delegationDesignator(executor: AddressInput): Uint8Array {
  return concatBytes(DELEGATION_PREFIX, addressBytes(executor, 'executor'));
}

/** Whether an account's code (from eth_getCode) is an EIP-7702 delegation to `executor`. */
export function isDelegatedTo(code: Uint8Array, executor: AddressInput): boolean {
  return equalBytes(code, delegationDesignator(executor));
}

/** The EIP-712 digest the account's key signs for a batch (what the contract's `ecrecover` checks). */
export function batchExecutionDigest(params: BatchExecutionParams): Uint8Array {
  const { calls } = params;
  if (calls.length < 1 || calls.length > MAX_BATCH_CALLS) {
    throw new RangeError(`a batch holds 1 to ${MAX_BATCH_CALLS} calls, got ${calls.length}`);
  }
  // An array of structs is encoded as keccak256 of its elements' hashStruct values, concatenated.
  const callHashes = calls.map((call, i) =>
    keccak_256(
      concatBytes(
        CALL_TYPEHASH,
        addressWord(addressBytes(call.to, `calls[${i}].to`)),
        uintWord(call.value, `calls[${i}].value`),
        keccak_256(call.data),
      ),
    ),
  );
  const structHash = keccak_256(
    concatBytes(
      BATCH_TYPEHASH,
      keccak_256(concatBytes(...callHashes)),
      uintWord(params.nonce, 'nonce'),
      uintWord(params.deadline, 'deadline'),
    ),
  );
  const domainSeparator = keccak_256(
    concatBytes(
      DOMAIN_TYPEHASH,
      NAME_HASH,
      VERSION_HASH,
      uintWord(BigInt(params.chainId), 'chainId'),
      addressWord(addressBytes(params.account, 'account')),
    ),
  );
  return keccak_256(concatBytes(Uint8Array.of(0x19, 0x01), domainSeparator, structHash));
}

/** The EIP-712 JSON a policy or a wallet sees for a batch (eth_signTypedData_v4 shape). */
export interface BatchExecutionTypedData {
  readonly types: {
    readonly EIP712Domain: readonly { readonly name: string; readonly type: string }[];
    readonly BatchExecution: readonly { readonly name: string; readonly type: string }[];
    readonly Call: readonly { readonly name: string; readonly type: string }[];
  };
  readonly primaryType: 'BatchExecution';
  readonly domain: {
    readonly name: string;
    readonly version: string;
    /** Decimal string. */
    readonly chainId: string;
    readonly verifyingContract: Hex;
  };
  readonly message: {
    readonly calls: readonly { readonly to: Hex; readonly value: string; readonly data: Hex }[];
    readonly nonce: string;
    readonly deadline: string;
  };
}

/** The batch as EIP-712 typed data: addresses and bytes as lower-case hex, integers as decimal strings. */
export function batchExecutionTypedData(params: BatchExecutionParams): BatchExecutionTypedData {
  // Same checks as the digest, so the JSON never shows a batch the digest would refuse.
  batchExecutionDigest(params);
  return {
    types: {
      EIP712Domain: [
        { name: 'name', type: 'string' },
        { name: 'version', type: 'string' },
        { name: 'chainId', type: 'uint256' },
        { name: 'verifyingContract', type: 'address' },
      ],
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
    },
    primaryType: 'BatchExecution',
    domain: {
      name: DOMAIN_NAME,
      version: DOMAIN_VERSION,
      chainId: BigInt(params.chainId).toString(10),
      verifyingContract: bytesTo0x(addressBytes(params.account, 'account')),
    },
    message: {
      calls: params.calls.map((call) => ({
        to: bytesTo0x(call.to),
        value: call.value.toString(10),
        data: bytesTo0x(call.data),
      })),
      nonce: params.nonce.toString(10),
      deadline: params.deadline.toString(10),
    },
  };
}

/** Calldata of `execute(calls, nonce, deadline, signature)`; `signature` is r ‖ s ‖ v (65 bytes). */
export function encodeExecuteCalldata(params: {
  readonly calls: readonly BatchCall[];
  readonly nonce: bigint;
  readonly deadline: bigint;
  readonly signature: Uint8Array;
}): Uint8Array {
  if (params.signature.length !== 65) {
    throw new TypeError(`signature must be 65 bytes (r ‖ s ‖ v), got ${params.signature.length}`);
  }
  const data = encodeFunctionData({
    abi: BATCH_EXECUTOR_ABI,
    functionName: 'execute',
    args: [
      params.calls.map((call, i) => ({
        to: bytesTo0x(addressBytes(call.to, `calls[${i}].to`)),
        value: call.value,
        data: bytesTo0x(call.data),
      })),
      params.nonce,
      params.deadline,
      bytesTo0x(params.signature),
    ],
  });
  return hexToBytes(data, 'execute calldata');
}

const NEXT_NONCE_CALL = hexToBytes(
  encodeFunctionData({ abi: BATCH_EXECUTOR_ABI, functionName: 'nextNonce' }),
  'nextNonce calldata',
);

/** Calldata of `nextNonce()` (eth_call it on the user's address). */
export function encodeNextNonceCall(): Uint8Array {
  return NEXT_NONCE_CALL.slice();
}

/** The result of an eth_call of `nextNonce()`. */
export function decodeNextNonceResult(data: Hex): bigint {
  return decodeFunctionResult({ abi: BATCH_EXECUTOR_ABI, functionName: 'nextNonce', data });
}

const SELECTOR_ERROR_STRING = '08c379a0'; // Error(string)
const SELECTOR_PANIC = '4e487b71'; // Panic(uint256)

function errorSelector(signature: string): string {
  return bytesTo0x(keccak_256(utf8(signature)).subarray(0, 4)).slice(2);
}

const EXECUTOR_ERRORS = {
  [errorSelector('InvalidBatchSize(uint256)')]: 'InvalidBatchSize',
  [errorSelector('DeadlineExpired(uint256)')]: 'DeadlineExpired',
  [errorSelector('NonceAlreadyUsed(uint256,uint256)')]: 'NonceAlreadyUsed',
  [errorSelector('InvalidSignature()')]: 'InvalidSignature',
  [errorSelector('CallFailed(uint256,bytes)')]: 'CallFailed',
} as const satisfies Record<string, ExecutorErrorName>;

type ExecutorErrorName = Extract<(typeof BATCH_EXECUTOR_ABI)[number], { type: 'error' }>['name'];

/** The text of an inner call's revert data, as a node would word it. */
function describeInnerRevert(reason: Hex): string {
  const hex = reason.slice(2).toLowerCase();
  if (hex.length === 0) return 'execution reverted';
  const selector = hex.slice(0, 8);
  try {
    if (selector === SELECTOR_ERROR_STRING) {
      const [message] = decodeAbiParameters([{ type: 'string' }], `0x${hex.slice(8)}`);
      return `execution reverted: ${message}`;
    }
    if (selector === SELECTOR_PANIC) {
      const [code] = decodeAbiParameters([{ type: 'uint256' }], `0x${hex.slice(8)}`);
      return `execution reverted: panic 0x${code.toString(16).padStart(2, '0')}`;
    }
  } catch {
    // Malformed Error/Panic payload: described by its selector below.
  }
  if (hex.length < 8) return `execution reverted: 0x${hex}`;
  return `execution reverted: custom error 0x${selector}`;
}

/**
 * Human text for revert data of the executor's own errors; undefined for anything else (including a
 * malformed payload behind one of its selectors).
 */
export function decodeExecutorRevert(data: Hex): string | undefined {
  const hex = data.slice(2).toLowerCase();
  const name: ExecutorErrorName | undefined = EXECUTOR_ERRORS[hex.slice(0, 8)];
  if (name === undefined || !/^[0-9a-f]*$/.test(hex) || hex.length % 2 !== 0) return undefined;
  const args: Hex = `0x${hex.slice(8)}`;
  try {
    switch (name) {
      case 'InvalidBatchSize': {
        const [length] = decodeAbiParameters([{ type: 'uint256' }], args);
        return `batch of ${length} calls is outside 1..${MAX_BATCH_CALLS}`;
      }
      case 'DeadlineExpired': {
        const [deadline] = decodeAbiParameters([{ type: 'uint256' }], args);
        return `batch deadline ${deadline} has passed`;
      }
      case 'NonceAlreadyUsed': {
        const [nonce, next] = decodeAbiParameters([{ type: 'uint256' }, { type: 'uint256' }], args);
        return `gas-station nonce ${nonce} was already used (next is ${next})`;
      }
      case 'InvalidSignature':
        return 'batch signature does not recover to the account';
      case 'CallFailed': {
        const [index, reason] = decodeAbiParameters([{ type: 'uint256' }, { type: 'bytes' }], args);
        return `call ${index} reverted: ${describeInnerRevert(reason)}`;
      }
      default: {
        const unreachable: never = name;
        return unreachable;
      }
    }
  } catch {
    return undefined;
  }
}
