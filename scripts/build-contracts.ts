/**
 * Compiles the gas station's batch executor with the solc version pinned in package.json (solc-js, no
 * download) and writes contracts/build/CountersignBatchExecutor.json. The artifact is committed; a unit
 * test recompiles with `compileBatchExecutor()` and demands identical output, so it cannot drift.
 *
 * Usage: `npm run build:contracts`
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as prettier from 'prettier';
import solc from 'solc';

export const CONTRACT_NAME = 'CountersignBatchExecutor';
export const SOURCE_PATH = fileURLToPath(new URL(`../contracts/${CONTRACT_NAME}.sol`, import.meta.url));
export const ARTIFACT_PATH = fileURLToPath(
  new URL(`../contracts/build/${CONTRACT_NAME}.json`, import.meta.url),
);

/**
 * Everything in the compiler input that shapes the bytecode. `cancun` runs on every chain with EIP-7702
 * (Prague adds no opcodes the executor needs). No CBOR metadata is appended, so the CREATE2 address
 * changes only when the compiled code does, not when a comment does (sourceSha256 tracks the text).
 */
export const COMPILER_SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'cancun',
  metadata: { appendCBOR: false },
} as const;

export interface ContractArtifact {
  readonly contractName: string;
  readonly compiler: { readonly version: string; readonly settings: typeof COMPILER_SETTINGS };
  readonly sourceSha256: string;
  readonly abi: readonly unknown[];
  readonly bytecode: `0x${string}`;
  readonly deployedBytecode: `0x${string}`;
}

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[];
  contracts?: Record<
    string,
    Record<
      string,
      { abi: unknown[]; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }
    >
  >;
}

/** Compiles the executor's source text; throws with solc's messages on any error or warning. */
export function compileBatchExecutor(source: string = readFileSync(SOURCE_PATH, 'utf8')): ContractArtifact {
  const fileName = `${CONTRACT_NAME}.sol`;
  const input = {
    language: 'Solidity',
    sources: { [fileName]: { content: source } },
    settings: {
      ...COMPILER_SETTINGS,
      outputSelection: {
        [fileName]: { [CONTRACT_NAME]: ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] },
      },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input)) as string) as SolcOutput;
  // Warnings fail the build too: the executor holds users' accounts, nothing in it should be doubtful.
  const problems = (output.errors ?? []).filter((e) => e.severity !== 'info');
  if (problems.length > 0) {
    throw new Error(`solc reported:\n${problems.map((e) => e.formattedMessage).join('\n')}`);
  }
  const contract = output.contracts?.[fileName]?.[CONTRACT_NAME];
  if (contract === undefined) throw new Error(`solc produced no ${CONTRACT_NAME}`);
  return {
    contractName: CONTRACT_NAME,
    compiler: { version: solc.version() as string, settings: COMPILER_SETTINGS },
    sourceSha256: createHash('sha256').update(source, 'utf8').digest('hex'),
    abi: contract.abi,
    bytecode: `0x${contract.evm.bytecode.object}`,
    deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
  };
}

/** Writes the artifact formatted as the repository's prettier config would, so `prettier --check` passes. */
export async function writeArtifact(artifact: ContractArtifact, path: string = ARTIFACT_PATH): Promise<void> {
  const config = (await prettier.resolveConfig(path)) ?? {};
  const text = await prettier.format(JSON.stringify(artifact), { ...config, parser: 'json' });
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

async function main(): Promise<void> {
  const artifact = compileBatchExecutor();
  await writeArtifact(artifact);
  const runtimeBytes = (artifact.deployedBytecode.length - 2) / 2;
  console.log(`${CONTRACT_NAME}: solc ${artifact.compiler.version}, ${runtimeBytes} bytes of runtime code`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
