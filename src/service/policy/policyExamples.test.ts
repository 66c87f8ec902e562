/**
 * The examples of turnkey-api.md 8.4, each run on the facts the chain adapters describe from real
 * transactions built here with the chains' own libraries (viem, @solana/web3.js, bitcoinjs-lib) or
 * the adapters' field mappers (Tron, Tempo).
 */
import {
  AddressLookupTableAccount,
  Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js';
import * as bitcoin from 'bitcoinjs-lib';
import { encodeFunctionData, erc20Abi, getAddress, serializeTransaction, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import * as bitcoinChain from '../../../chains/bitcoin/index.js';
import * as ethereum from '../../../chains/ethereum/index.js';
import * as solana from '../../../chains/solana/index.js';
import * as tempo from '../../../chains/tempo/index.js';
import * as tron from '../../../chains/tron/index.js';
import { PUB_A } from '../../../test/vectors/bitcoin/vectors.js';
import { buildFacts, type BuildFactsInput } from './buildFacts.js';
import {
  evaluatePolicies,
  type DecisionOutcome,
  type PolicyCredential,
  type PolicyToEvaluate,
  type PolicyUser,
} from './evaluatePolicies.js';

const NOW = new Date('2026-03-16T10:00:00Z');
const SIGN_TX = 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2';

const U = { id: 'user-u', tags: ['treasury'], email: 'u@example.com' } satisfies PolicyUser;
const V = { id: 'user-v', tags: ['treasury'] } satisfies PolicyUser;
const W = { id: 'user-w', tags: [] } satisfies PolicyUser;

function decide(
  policies: PolicyToEvaluate[],
  facts: BuildFactsInput,
  approvers: PolicyUser[] = [U],
  credentials: PolicyCredential[] = [],
): DecisionOutcome {
  return evaluatePolicies({
    policies,
    facts: buildFacts(facts),
    approvers,
    credentials,
    rootQuorum: { threshold: 1, approverUserIds: ['root-user'] },
    now: NOW,
  }).outcome;
}

const allow = (condition?: string, consensus?: string): PolicyToEvaluate => ({
  policyId: 'allow',
  effect: 'EFFECT_ALLOW',
  ...(condition === undefined ? {} : { condition }),
  ...(consensus === undefined ? {} : { consensus }),
});

// --- Ethereum: viem serializes, the adapter parses and describes. ---
const FROM = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const A = getAddress('0x70997970c51812dc3a010c7d01b50e0d17dc79c8');
const B = getAddress('0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc');
const TOKEN = getAddress('0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48');

function ethFacts(tx: {
  to: Hex;
  chainId?: number;
  data?: Hex;
  value?: bigint;
}): BuildFactsInput['transaction'] {
  const unsigned = serializeTransaction({
    type: 'eip1559',
    chainId: tx.chainId ?? 1,
    nonce: 7,
    to: tx.to,
    value: tx.value ?? 10n ** 15n,
    data: tx.data ?? '0x',
    gas: 60_000n,
    maxFeePerGas: 30_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
  });
  const parsed = ethereum.parseUnsignedTransaction(Uint8Array.from(Buffer.from(unsigned.slice(2), 'hex')));
  return { chain: 'eth', tx: ethereum.describeTransaction(parsed, FROM) };
}

const signEth = (
  tx: Parameters<typeof ethFacts>[0],
  extra: Partial<BuildFactsInput> = {},
): BuildFactsInput => ({
  activity: { type: SIGN_TX, parameters: { type: 'TRANSACTION_TYPE_ETHEREUM', signWith: FROM } },
  wallet: { id: 'wallet-1', label: 'main', imported: false, exported: false },
  walletAccount: { address: FROM },
  transaction: ethFacts(tx),
  ...extra,
});

describe('8.4 Ethereum examples on viem-built transactions', () => {
  it('gives the adapter facts the policies read', () => {
    const t = ethFacts({ to: A, chainId: 11155111 });
    expect(t?.tx).toMatchObject({
      to: A.toLowerCase(),
      chain_id: 11155111n,
      type: 'TYPE_2',
      nonce: 7n,
      data: '0x',
    });
  });

  it('only user U may sign transactions to A', () => {
    const policy = allow(`eth.tx.to == '${A}'`, `approvers.any(user, user.id == '${U.id}')`);
    expect(decide([policy], signEth({ to: A }), [U])).toBe('OUTCOME_ALLOW');
    expect(decide([policy], signEth({ to: A }), [V])).toBe('OUTCOME_REQUIRES_CONSENSUS');
    expect(decide([policy], signEth({ to: A }), [V, U])).toBe('OUTCOME_ALLOW');
    expect(decide([policy], signEth({ to: B }), [U])).toBe('OUTCOME_DENY_IMPLICIT');
  });

  it('matches an address literal in any case against the lower-case facts', () => {
    for (const literal of [A, A.toLowerCase(), A.toUpperCase().replace('0X', '0x')]) {
      expect(decide([allow(`eth.tx.to == '${literal}'`)], signEth({ to: A }))).toBe('OUTCOME_ALLOW');
    }
  });

  it('testnet only: chain_id 11155111', () => {
    const policy = allow('eth.tx.chain_id == 11155111');
    expect(decide([policy], signEth({ to: A, chainId: 11155111 }))).toBe('OUTCOME_ALLOW');
    expect(decide([policy], signEth({ to: A, chainId: 1 }))).toBe('OUTCOME_DENY_IMPLICIT');
  });

  it('ERC-20 transfers to one token only', () => {
    const policy = allow(`eth.tx.to == '${TOKEN}' && eth.tx.data[0..10] == '0xa9059cbb'`);
    const transfer = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [B, 1_000_000n] });
    const approve = encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [B, 1_000_000n] });
    expect(decide([policy], signEth({ to: TOKEN, data: transfer, value: 0n }))).toBe('OUTCOME_ALLOW');
    expect(decide([policy], signEth({ to: TOKEN, data: approve, value: 0n }))).toBe('OUTCOME_DENY_IMPLICIT');
    expect(decide([policy], signEth({ to: A, data: transfer, value: 0n }))).toBe('OUTCOME_DENY_IMPLICIT');
    // Plain ETH to the token: '0x'[0..10] is '0x', which is not the selector.
    expect(decide([policy], signEth({ to: TOKEN }))).toBe('OUTCOME_DENY_IMPLICIT');
  });

  it('sign only within one wallet, one private key or one account', () => {
    const inWallet = allow("activity.action == 'SIGN' && wallet.id == 'wallet-1'");
    expect(decide([inWallet], signEth({ to: A }))).toBe('OUTCOME_ALLOW');
    expect(
      decide(
        [inWallet],
        signEth({ to: A }, { wallet: { id: 'wallet-2', label: 'x', imported: false, exported: false } }),
      ),
    ).toBe('OUTCOME_DENY_IMPLICIT');

    const withKey = signEth({ to: A });
    const { wallet: _w, walletAccount: _a, ...rest } = withKey;
    const byKey: BuildFactsInput = {
      ...rest,
      privateKey: { id: 'key-1', label: 'hot', tags: [], imported: false, exported: false },
    };
    // wallet.id errors when signing with a private key: the policy is an error, not an allow.
    const d = evaluatePolicies({
      policies: [inWallet],
      facts: buildFacts(byKey),
      approvers: [U],
      credentials: [],
      rootQuorum: { threshold: 1, approverUserIds: [] },
      now: NOW,
    });
    expect(d.outcome).toBe('OUTCOME_DENY_IMPLICIT');
    expect(d.policyEvaluations[0]?.outcome).toBe('OUTCOME_ERROR');

    expect(decide([allow("private_key.id == 'key-1'")], byKey)).toBe('OUTCOME_ALLOW');
    expect(decide([allow("private_key.id == 'key-2'")], byKey)).toBe('OUTCOME_DENY_IMPLICIT');
    expect(decide([allow(`wallet_account.address == '${FROM.toLowerCase()}'`)], signEth({ to: A }))).toBe(
      'OUTCOME_ALLOW',
    );
    expect(decide([allow(`wallet_account.address == '${A}'`)], signEth({ to: A }))).toBe(
      'OUTCOME_DENY_IMPLICIT',
    );
  });

  it('version-agnostic: activity.kind matches SIGN_TRANSACTION V1 and V2', () => {
    const policy = allow("activity.kind == 'SIGN_TRANSACTION'");
    const v2 = signEth({ to: A });
    expect(decide([policy], v2)).toBe('OUTCOME_ALLOW');
    expect(
      decide([policy], { ...v2, activity: { type: 'ACTIVITY_TYPE_SIGN_TRANSACTION', parameters: {} } }),
    ).toBe('OUTCOME_ALLOW');
    expect(
      decide([policy], { ...v2, activity: { type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', parameters: {} } }),
    ).toBe('OUTCOME_DENY_IMPLICIT');
  });

  it('credential-type gate on consensus', () => {
    const policy = allow(undefined, "credentials.any(c, c.type == 'CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR')");
    const cred = (type: string): PolicyCredential => ({
      id: 'cred-1',
      userId: U.id,
      type,
      credentialId: 'abc',
      publicKey: '02ab',
    });
    expect(decide([policy], signEth({ to: A }), [U], [cred('CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR')])).toBe(
      'OUTCOME_ALLOW',
    );
    expect(decide([policy], signEth({ to: A }), [U], [cred('CREDENTIAL_TYPE_API_KEY_P256')])).toBe(
      'OUTCOME_REQUIRES_CONSENSUS',
    );
  });
});

describe('8.4 activity examples', () => {
  it('two tagged approvers to create policies', () => {
    const policy = allow(
      "activity.resource == 'POLICY' && activity.action == 'CREATE'",
      "approvers.filter(user, user.tags.contains('treasury')).count() >= 2",
    );
    const create: BuildFactsInput = {
      activity: {
        type: 'ACTIVITY_TYPE_CREATE_POLICY_V3',
        parameters: { policyName: 'p', effect: 'EFFECT_ALLOW' },
      },
    };
    expect(decide([policy], create, [U])).toBe('OUTCOME_REQUIRES_CONSENSUS');
    expect(decide([policy], create, [U, W])).toBe('OUTCOME_REQUIRES_CONSENSUS');
    expect(decide([policy], create, [U, W, V])).toBe('OUTCOME_ALLOW');
    const del: BuildFactsInput = {
      activity: { type: 'ACTIVITY_TYPE_DELETE_POLICY', parameters: { policyId: 'x' } },
    };
    expect(decide([policy], del, [U, V])).toBe('OUTCOME_DENY_IMPLICIT');
  });

  it('deny NO_OP raw signing except EIP-712', () => {
    const deny: PolicyToEvaluate = {
      policyId: 'deny-no-op',
      effect: 'EFFECT_DENY',
      condition:
        "activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2' && activity.params.hash_function == 'HASH_FUNCTION_NO_OP' && activity.params.encoding != 'PAYLOAD_ENCODING_EIP712'",
    };
    const everything = allow();
    const raw = (hashFunction: string, encoding: string): BuildFactsInput => ({
      activity: {
        type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
        parameters: { signWith: FROM, payload: 'ab'.repeat(32), hashFunction, encoding },
      },
    });
    expect(decide([deny, everything], raw('HASH_FUNCTION_NO_OP', 'PAYLOAD_ENCODING_HEXADECIMAL'))).toBe(
      'OUTCOME_DENY_EXPLICIT',
    );
    expect(decide([deny, everything], raw('HASH_FUNCTION_NO_OP', 'PAYLOAD_ENCODING_EIP712'))).toBe(
      'OUTCOME_ALLOW',
    );
    expect(decide([deny, everything], raw('HASH_FUNCTION_KECCAK256', 'PAYLOAD_ENCODING_HEXADECIMAL'))).toBe(
      'OUTCOME_ALLOW',
    );
    // A transaction has no hash_function: the deny errors (MissingField) and so does not apply.
    expect(decide([deny, everything], signEth({ to: A }))).toBe('OUTCOME_ALLOW');
  });
});

// --- Solana: @solana/web3.js builds, the adapter parses the wire bytes and describes. ---
const PAYER = Keypair.fromSeed(new Uint8Array(32).fill(1)).publicKey;
const R = Keypair.fromSeed(new Uint8Array(32).fill(2)).publicKey;
const OTHER = Keypair.fromSeed(new Uint8Array(32).fill(3)).publicKey;
const BLOCKHASH = new PublicKey(new Uint8Array(32).fill(9)).toBase58();

function solanaFacts(wire: Uint8Array): BuildFactsInput {
  const tx = solana.parseWireTransaction(wire);
  return {
    activity: { type: SIGN_TX, parameters: { type: 'TRANSACTION_TYPE_SOLANA' } },
    transaction: { chain: 'solana', tx: solana.describeTransaction(tx) },
  };
}

function legacyTransfer(...to: PublicKey[]): BuildFactsInput {
  const tx = new Transaction({ feePayer: PAYER, recentBlockhash: BLOCKHASH });
  for (const t of to) tx.add(SystemProgram.transfer({ fromPubkey: PAYER, toPubkey: t, lamports: 5_000 }));
  return solanaFacts(tx.serialize({ requireAllSignatures: false, verifySignatures: false }));
}

function v0WithLookupTable(): BuildFactsInput {
  const table = new AddressLookupTableAccount({
    key: Keypair.fromSeed(new Uint8Array(32).fill(4)).publicKey,
    state: {
      deactivationSlot: 2n ** 64n - 1n,
      lastExtendedSlot: 0,
      lastExtendedSlotStartIndex: 0,
      addresses: [R],
    },
  });
  const message = new TransactionMessage({
    payerKey: PAYER,
    recentBlockhash: BLOCKHASH,
    instructions: [SystemProgram.transfer({ fromPubkey: PAYER, toPubkey: R, lamports: 5_000 })],
  }).compileToV0Message([table]);
  return solanaFacts(new VersionedTransaction(message).serialize());
}

describe('8.4 Solana examples on @solana/web3.js transactions', () => {
  it('every System transfer goes to R', () => {
    const policy = allow(`solana.tx.transfers.all(t, t.to == '${R.toBase58()}')`);
    expect(decide([policy], legacyTransfer(R))).toBe('OUTCOME_ALLOW');
    expect(decide([policy], legacyTransfer(R, R))).toBe('OUTCOME_ALLOW');
    expect(decide([policy], legacyTransfer(R, OTHER))).toBe('OUTCOME_DENY_IMPLICIT');
    expect(decide([policy], legacyTransfer(OTHER))).toBe('OUTCOME_DENY_IMPLICIT');
    const amounts = allow(`solana.tx.transfers.all(t, t.amount <= 5000 && t.from == '${PAYER.toBase58()}')`);
    expect(decide([amounts], legacyTransfer(R, OTHER))).toBe('OUTCOME_ALLOW');
  });

  it('denies address lookup tables', () => {
    const deny: PolicyToEvaluate = {
      policyId: 'no-alt',
      effect: 'EFFECT_DENY',
      condition: 'solana.tx.address_table_lookups.count() > 0',
    };
    expect(decide([deny, allow()], v0WithLookupTable())).toBe('OUTCOME_DENY_EXPLICIT');
    expect(decide([deny, allow()], legacyTransfer(R))).toBe('OUTCOME_ALLOW');
  });

  it('errors, and so does not allow, when an Ethereum policy meets a Solana transaction', () => {
    expect(decide([allow(`eth.tx.to == '${A}'`)], legacyTransfer(R))).toBe('OUTCOME_DENY_IMPLICIT');
  });
});

// --- Tron: the adapter's field mapper builds raw_data; parse and describe. ---
const TRON_OWNER = 'TYBNgWfhGuNzdLtjKtxXTfskAhTbMcqbaG';
const TRON_TO = 'TLEaY8XoqpBmndLsjcfThgdKLN1ssNuUcF';

function trxTransfer(amount: string): BuildFactsInput {
  const raw = tron.rawDataFromFields({
    kind: 'TRX_TRANSFER',
    ownerAddress: TRON_OWNER,
    toAddress: TRON_TO,
    amount,
    tokenContract: '',
    feeLimit: '',
    refBlockBytes: '1a2b',
    refBlockHash: '0011223344556677',
    expiration: '1700000060000',
    timestamp: '1700000000000',
    memo: new Uint8Array(),
    permissionId: 0,
    expectedTxId: '',
  });
  return {
    activity: { type: SIGN_TX, parameters: { type: 'TRANSACTION_TYPE_TRON' } },
    transaction: { chain: 'tron', tx: tron.describeTransaction(tron.parseRawData(raw)) },
  };
}

describe('8.4 Tron example on a TRX transfer', () => {
  it('first contract moves less than 10 TRX', () => {
    const policy = allow(
      `tron.tx.contract[0].amount < 10000000 && tron.tx.contract[0].type == 'TransferContract' && tron.tx.contract[0].to_address == '${TRON_TO}'`,
    );
    expect(decide([policy], trxTransfer('1000000'))).toBe('OUTCOME_ALLOW');
    expect(decide([policy], trxTransfer('9999999'))).toBe('OUTCOME_ALLOW');
    expect(decide([policy], trxTransfer('10000000'))).toBe('OUTCOME_DENY_IMPLICIT');
  });
});

// --- Bitcoin: bitcoinjs-lib builds the PSBT; parse and describe. ---
const P2WPKH = (fill: number): Uint8Array =>
  bitcoin.payments.p2wpkh({ hash: new Uint8Array(20).fill(fill), network: bitcoin.networks.regtest })
    .output as Uint8Array;

/** A PSBT spending `inputs` P2WPKH outputs of key A (stated by witness_utxo alone), described for A. */
function psbtFacts(outputs: bigint[], inputs: bigint[] = [250_000n]): BuildFactsInput {
  const psbt = new bitcoin.Psbt({ network: bitcoin.networks.regtest });
  const mine = bitcoin.payments.p2wpkh({ pubkey: PUB_A, network: bitcoin.networks.regtest })
    .output as Uint8Array;
  inputs.forEach((value, index) =>
    psbt.addInput({
      hash: new Uint8Array(32).fill(5),
      index: index + 1,
      witnessUtxo: { script: mine, value },
    }),
  );
  outputs.forEach((value, i) => psbt.addOutput({ script: P2WPKH(2 + i), value }));
  const parsed = bitcoinChain.parsePsbt(psbt.toBuffer());
  return {
    activity: { type: SIGN_TX, parameters: { type: 'TRANSACTION_TYPE_BITCOIN' } },
    transaction: { chain: 'bitcoin', tx: bitcoinChain.describeTransaction(parsed, 'regtest', PUB_A) },
  };
}

describe('8.4 Bitcoin examples on a bitcoinjs-lib PSBT', () => {
  const small = allow('bitcoin.tx.outputs.all(o, o.value < 200000)');
  const cheap = allow('bitcoin.tx.fee <= 10000');

  it('every output is below 200 000 sat', () => {
    expect(decide([small], psbtFacts([150_000n, 90_000n]))).toBe('OUTCOME_ALLOW');
    expect(decide([small], psbtFacts([200_000n, 40_000n]))).toBe('OUTCOME_DENY_IMPLICIT');
  });

  it('the fee is at most 10 000 sat', () => {
    expect(decide([cheap], psbtFacts([150_000n, 90_000n]))).toBe('OUTCOME_ALLOW'); // fee 10 000
    expect(decide([cheap], psbtFacts([150_000n, 89_999n]))).toBe('OUTCOME_DENY_IMPLICIT');
  });

  it('a fee limit, as an allow or as a deny, refuses a fee whose amounts are not proven', () => {
    // Two segwit v0 inputs of the signer stated by witness_utxo alone: each signature commits to
    // its own input's amount only, so the stated fee of 10 000 sat proves nothing (policyFee).
    const unproven = psbtFacts([240_000n], [125_000n, 125_000n]);
    expect(decide([cheap], unproven)).toBe('OUTCOME_DENY_IMPLICIT');
    const anything = allow('true');
    const expensive = { ...allow('bitcoin.tx.fee > 10000'), effect: 'EFFECT_DENY' as const };
    expect(decide([anything, expensive], unproven)).toBe('OUTCOME_DENY_EXPLICIT');
    expect(decide([anything, expensive], psbtFacts([240_000n]))).toBe('OUTCOME_ALLOW');
  });

  it('reads the regtest address, type and input of the described PSBT', () => {
    const facts = psbtFacts([150_000n, 90_000n]);
    const addr = bitcoin.payments.p2wpkh({
      hash: new Uint8Array(20).fill(2),
      network: bitcoin.networks.regtest,
    }).address;
    const policy = allow(
      `bitcoin.tx.outputs[0].address == '${addr}' && bitcoin.tx.outputs[0].address_type == 'P2WPKH' && bitcoin.tx.inputs[0].vout == 1 && bitcoin.tx.outputs.count == 2`,
    );
    expect(decide([policy], facts)).toBe('OUTCOME_ALLOW');
  });
});

// --- Tempo: the adapter's field mapper builds the transaction; describe it. ---
const TIP20 = '0x20C0000000000000000000000000000000000001';

function tempoFacts(to: string, data: Uint8Array): BuildFactsInput {
  const tx = tempo.transactionFromFields({
    chainId: '42431',
    nonce: '0',
    nonceKey: '',
    gasLimit: '300000',
    maxFeePerGas: '20000000000',
    maxPriorityFeePerGas: '1',
    calls: [{ to, value: '', data }],
    accessList: [],
    validBefore: '',
    validAfter: '',
    feeToken: TIP20,
    sponsored: false,
  });
  return {
    activity: { type: SIGN_TX, parameters: { type: 'TRANSACTION_TYPE_TEMPO' } },
    transaction: { chain: 'tempo', tx: tempo.describeTransaction(tx, FROM) },
  };
}

describe('Tempo policy on a described Tempo transaction', () => {
  it('only TIP-20 transfers on chain 42431', () => {
    const policy = allow(
      `tempo.tx.chain_id == 42431 && tempo.tx.calls.all(c, c.to == '${TIP20}' && c.function_signature == '0xa9059cbb')`,
    );
    const transfer = Buffer.from(
      encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [B, 5n] }).slice(2),
      'hex',
    );
    const approve = Buffer.from(
      encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [B, 5n] }).slice(2),
      'hex',
    );
    expect(decide([policy], tempoFacts(TIP20, transfer))).toBe('OUTCOME_ALLOW');
    expect(decide([policy], tempoFacts(TIP20, approve))).toBe('OUTCOME_DENY_IMPLICIT');
    expect(decide([policy], tempoFacts(A, transfer))).toBe('OUTCOME_DENY_IMPLICIT');
  });
});
