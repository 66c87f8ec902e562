/**
 * Turnkey's own, unmodified Solana signer against the embedded service's base URL:
 * `@turnkey/solana`'s TurnkeySigner over `@turnkey/http`'s TurnkeyClient with
 * `@turnkey/api-key-stamper`. The transactions it signs execute on litesvm; the message signature
 * verifies with ed25519 (node:crypto). The service's refusals of bad sign_transaction(SOLANA)
 * input are checked on the same HTTP surface.
 */
import { createPublicKey, randomUUID, verify as nodeVerify } from 'node:crypto';
import { base58 } from '@scure/base';
import { address, lamports } from '@solana/kit';
import {
  AddressLookupTableAccount,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { TurnkeyClient } from '@turnkey/http';
import { TurnkeySigner } from '@turnkey/solana';
import { LiteSVM } from 'litesvm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { envelope, post } from './helpers/http.js';
import { signerFromSeed, toHex } from './vectors/solana/keys.js';
import { balanceOf, execute, installLookupTable } from './vectors/solana/litesvm.js';

const SOL = 1_000_000_000n;
const FEE_PER_SIGNATURE = 5_000n;
const AMOUNT = 1_000_000n;

let h: EmbeddedHarness;
let org: string;
let account: string;
let ethAccount: string;
let turnkey: TurnkeySigner;
let svm: LiteSVM;
const TABLE = PublicKey.unique().toBase58();
const tableEntries = [PublicKey.unique().toBase58(), PublicKey.unique().toBase58()];
const tableRecipient = tableEntries[1]!;

beforeAll(async () => {
  h = await startEmbedded();
  const c = h.service.credentials;
  org = c.organizationId;
  const find = (format: string) => {
    const a = c.accounts.find((x) => x.addressFormat === format);
    if (a === undefined) throw new Error(`the default wallet has no ${format} account`);
    return a.address;
  };
  account = find('ADDRESS_FORMAT_SOLANA');
  ethAccount = find('ADDRESS_FORMAT_ETHEREUM');
  const client = new TurnkeyClient(
    { baseUrl: h.baseUrl },
    new ApiKeyStamper({ apiPublicKey: c.apiPublicKey, apiPrivateKey: c.apiPrivateKey }),
  );
  // @turnkey/solana pins its own @turnkey/http; it recognises the client by its name at run time.
  turnkey = new TurnkeySigner({ organizationId: org, client: client as never });

  svm = new LiteSVM();
  installLookupTable(svm, TABLE, tableEntries);
  svm.airdrop(address(account), lamports(10n * SOL));
});

afterAll(async () => {
  await h?.close();
});

// RFC 8410: SubjectPublicKeyInfo DER for an Ed25519 key is this prefix followed by the raw 32 bytes.
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
function ed25519Verifies(signature: Uint8Array, message: Uint8Array, key: string): boolean {
  const spki = createPublicKey({
    key: Buffer.concat([SPKI_ED25519_PREFIX, new PublicKey(key).toBytes()]),
    format: 'der',
    type: 'spki',
  });
  return nodeVerify(null, message, spki, signature);
}

describe('@turnkey/solana TurnkeySigner against the embedded service', () => {
  it('signs a legacy Transaction that executes on litesvm', async () => {
    const to = PublicKey.unique().toBase58();
    const tx = new Transaction({
      feePayer: new PublicKey(account),
      recentBlockhash: svm.latestBlockhash(),
    }).add(
      SystemProgram.transfer({
        fromPubkey: new PublicKey(account),
        toPubkey: new PublicKey(to),
        lamports: AMOUNT,
      }),
    );
    const messageBefore = tx.serializeMessage();
    const signed = (await turnkey.signTransaction(tx, account)) as Transaction;
    expect(signed).toBeInstanceOf(Transaction);
    expect(toHex(signed.serializeMessage())).toBe(toHex(messageBefore));
    expect(signed.verifySignatures(true)).toBe(true);
    const sig = signed.signature;
    if (sig === null) throw new Error('no fee-payer signature');
    expect(ed25519Verifies(sig, messageBefore, account)).toBe(true);

    const before = { payer: balanceOf(svm, account), to: balanceOf(svm, to) };
    const meta = execute(svm, signed.serialize());
    expect(base58.encode(meta.signature())).toBe(base58.encode(sig));
    expect(balanceOf(svm, to) - before.to).toBe(AMOUNT);
    expect(before.payer - balanceOf(svm, account)).toBe(AMOUNT + FEE_PER_SIGNATURE);
  });

  it('signs a v0 VersionedTransaction with a lookup table that executes on litesvm', async () => {
    const table = new AddressLookupTableAccount({
      key: new PublicKey(TABLE),
      state: {
        deactivationSlot: BigInt('0xffffffffffffffff'),
        lastExtendedSlot: 0,
        lastExtendedSlotStartIndex: 0,
        addresses: tableEntries.map((a) => new PublicKey(a)),
      },
    });
    const message = new TransactionMessage({
      payerKey: new PublicKey(account),
      recentBlockhash: svm.latestBlockhash(),
      instructions: [
        SystemProgram.transfer({
          fromPubkey: new PublicKey(account),
          toPubkey: new PublicKey(tableRecipient),
          lamports: AMOUNT,
        }),
      ],
    }).compileToV0Message([table]);
    expect(message.addressTableLookups).toHaveLength(1);
    const vtx = new VersionedTransaction(message);
    const signed = (await turnkey.signTransaction(vtx, account)) as VersionedTransaction;
    expect(signed).toBeInstanceOf(VersionedTransaction);
    expect(signed.version).toBe(0);
    expect(toHex(signed.message.serialize())).toBe(toHex(message.serialize()));
    expect(ed25519Verifies(signed.signatures[0]!, message.serialize(), account)).toBe(true);

    const before = { payer: balanceOf(svm, account), to: balanceOf(svm, tableRecipient) };
    const meta = execute(svm, signed.serialize());
    expect(base58.encode(meta.signature())).toBe(base58.encode(signed.signatures[0]!));
    expect(balanceOf(svm, tableRecipient) - before.to).toBe(AMOUNT);
    expect(before.payer - balanceOf(svm, account)).toBe(AMOUNT + FEE_PER_SIGNATURE);
  });

  it('signs a message (sign_raw_payload, NOT_APPLICABLE) that verifies with ed25519', async () => {
    const message = new TextEncoder().encode(`countersign solana message ${randomUUID()}`);
    const sig = await turnkey.signMessage(message, account);
    expect(sig).toHaveLength(64);
    expect(ed25519Verifies(sig, message, account)).toBe(true);
    expect(ed25519Verifies(sig, Uint8Array.from([...message, 0x21]), account)).toBe(false);
  });
});

describe('sign_transaction(TRANSACTION_TYPE_SOLANA) refusals on the public API', () => {
  const activityCount = async () => (await h.service.store.listActivities(org, { limit: 1000 })).length;
  const unsignedFrom = (feePayer: string, from: string, to: string) =>
    new VersionedTransaction(
      new TransactionMessage({
        payerKey: new PublicKey(feePayer),
        recentBlockhash: svm.latestBlockhash(),
        instructions: [
          SystemProgram.transfer({
            fromPubkey: new PublicKey(from),
            toPubkey: new PublicKey(to),
            lamports: 1n,
          }),
        ],
      }).compileToLegacyMessage(),
    ).serialize();

  async function refused(signWith: string, unsigned: Uint8Array, errorCode: string, field: string) {
    const before = await activityCount();
    const res = await post(
      h.baseUrl,
      h.service.credentials,
      '/public/v1/submit/sign_transaction',
      envelope('ACTIVITY_TYPE_SIGN_TRANSACTION_V2', org, {
        signWith,
        unsignedTransaction: toHex(unsigned),
        type: 'TRANSACTION_TYPE_SOLANA',
      }),
    );
    expect(res.status).toBe(400);
    expect(res.json['code']).toBe(3);
    expect(String(res.json['message'])).toMatch(new RegExp(`^${field.replace('.', '\\.')}: `));
    const details = res.json['details'] as Record<string, unknown>[];
    expect(details[0]).toMatchObject({ countersignErrorCode: errorCode });
    expect(details[1]).toMatchObject({ fieldViolations: [{ field }] });
    expect(await activityCount()).toBe(before);
  }

  it('truncated and trailing bytes: SOLANA_MALFORMED_TRANSACTION naming parameters.unsignedTransaction', async () => {
    const wire = unsignedFrom(account, account, PublicKey.unique().toBase58());
    await refused(
      account,
      wire.subarray(0, wire.length - 3),
      'SOLANA_MALFORMED_TRANSACTION',
      'parameters.unsignedTransaction',
    );
    await refused(
      account,
      Uint8Array.from([...wire, 7]),
      'SOLANA_MALFORMED_TRANSACTION',
      'parameters.unsignedTransaction',
    );
  });

  it('a key that is not a required signer: SOLANA_SIGNER_NOT_REQUIRED naming parameters.signWith', async () => {
    const other = signerFromSeed(PublicKey.unique().toBytes()).address;
    await refused(
      account,
      unsignedFrom(other, other, account),
      'SOLANA_SIGNER_NOT_REQUIRED',
      'parameters.signWith',
    );
  });

  it('a secp256k1 key: CURVE_UNSUPPORTED naming parameters.signWith', async () => {
    await refused(
      ethAccount,
      unsignedFrom(account, account, PublicKey.unique().toBase58()),
      'CURVE_UNSUPPORTED',
      'parameters.signWith',
    );
  });
});
