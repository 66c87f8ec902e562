/**
 * End to end over real HTTP with @turnkey/sdk-server's unmodified client: a wallet created from
 * sdk-server's own default accounts of the newer formats, then `sign_raw_payload` with each account's
 * address as `signWith`, each signature checked the way its chain checks it (Sui's personal-message
 * verifier, Aptos' and Stellar's key verify, @ton/crypto, ECDSA over SHA-256 with low S for the
 * secp256k1 chains, BIP-340 over the tweaked output key for signet P2TR).
 */
import { Ed25519PublicKey as AptosEd25519PublicKey, Ed25519Signature } from '@aptos-labs/ts-sdk';
import { encodeSecp256k1Pubkey, makeSignDoc, pubkeyToAddress, serializeSignDoc } from '@cosmjs/amino';
import { bcs } from '@mysten/sui/bcs';
import { messageWithIntent, toSerializedSignature } from '@mysten/sui/cryptography';
import { Ed25519PublicKey as SuiEd25519PublicKey } from '@mysten/sui/keypairs/ed25519';
import { verifyPersonalMessageSignature } from '@mysten/sui/verify';
import { schnorr, secp256k1 } from '@noble/curves/secp256k1.js';
import { blake2b } from '@noble/hashes/blake2.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bech32m } from '@scure/base';
import { Keypair } from '@stellar/stellar-base';
import { signVerify } from '@ton/crypto';
import { WalletContractV3R2, WalletContractV4 } from '@ton/ton';
import {
  DEFAULT_APTOS_ACCOUNTS,
  DEFAULT_BITCOIN_SIGNET_P2TR_ACCOUNTS,
  DEFAULT_BITCOIN_SIGNET_P2WPKH_ACCOUNTS,
  DEFAULT_BITCOIN_SIGNET_P2WSH_ACCOUNTS,
  DEFAULT_COSMOS_ACCOUNTS,
  DEFAULT_DOGE_MAINNET_ACCOUNTS,
  DEFAULT_DOGE_TESTNET_ACCOUNTS,
  DEFAULT_SEI_ACCOUNTS,
  DEFAULT_SUI_ACCOUNTS,
  DEFAULT_TON_V3R2_ACCOUNTS,
  DEFAULT_TON_V4R2_ACCOUNTS,
  DEFAULT_XLM_ACCOUNTS,
  Turnkey,
} from '@turnkey/sdk-server';
import * as bitcoin from 'bitcoinjs-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bytesToHex, hexToBytes } from '../src/shared/encoding.js';
import { startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { envelope, post } from './helpers/http.js';

type Api = ReturnType<Turnkey['apiClient']>;
interface Account {
  readonly address: string;
  readonly addressFormat: string;
  readonly publicKey: Uint8Array;
}

let h: EmbeddedHarness;
let api: Api;
const accounts = new Map<string, Account>();

const DEFAULTS = [
  ...DEFAULT_APTOS_ACCOUNTS,
  ...DEFAULT_SUI_ACCOUNTS,
  ...DEFAULT_XLM_ACCOUNTS,
  ...DEFAULT_TON_V3R2_ACCOUNTS,
  ...DEFAULT_TON_V4R2_ACCOUNTS,
  ...DEFAULT_COSMOS_ACCOUNTS,
  ...DEFAULT_SEI_ACCOUNTS,
  ...DEFAULT_DOGE_MAINNET_ACCOUNTS,
  ...DEFAULT_DOGE_TESTNET_ACCOUNTS,
  ...DEFAULT_BITCOIN_SIGNET_P2WPKH_ACCOUNTS,
  ...DEFAULT_BITCOIN_SIGNET_P2TR_ACCOUNTS,
];

beforeAll(async () => {
  h = await startEmbedded();
  const c = h.service.credentials;
  api = new Turnkey({
    apiBaseUrl: h.baseUrl,
    apiPublicKey: c.apiPublicKey,
    apiPrivateKey: c.apiPrivateKey,
    defaultOrganizationId: c.organizationId,
  }).apiClient();
  const created = await api.createWallet({ walletName: 'newer formats', accounts: DEFAULTS });
  expect(created.addresses).toHaveLength(DEFAULTS.length);
  const listed = await api.getWalletAccounts({
    walletId: created.walletId,
    paginationOptions: { limit: '100' },
  });
  for (const a of listed.accounts) {
    accounts.set(a.addressFormat, {
      address: a.address,
      addressFormat: a.addressFormat,
      publicKey: hexToBytes(String(a.publicKey), 'publicKey'),
    });
  }
  // The creation result lists the addresses in the order of the requested accounts.
  expect(created.addresses).toEqual(DEFAULTS.map((d) => accounts.get(d.addressFormat)?.address));
});
afterAll(async () => {
  await h.close();
});

function account(format: string): Account {
  const a = accounts.get(format);
  if (a === undefined) throw new Error(`no ${format} account`);
  return a;
}

async function signRaw(
  signWith: string,
  payload: string,
  encoding: 'PAYLOAD_ENCODING_HEXADECIMAL' | 'PAYLOAD_ENCODING_TEXT_UTF8',
  hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE' | 'HASH_FUNCTION_SHA256',
) {
  const res = await api.signRawPayload({ signWith, payload, encoding, hashFunction });
  expect(res.r).toMatch(/^[0-9a-f]{64}$/);
  expect(res.s).toMatch(/^[0-9a-f]{64}$/);
  return { rs: hexToBytes(res.r + res.s, 'signature'), v: Number.parseInt(res.v, 16) };
}

/** Signs with Ed25519 (the payload itself, RFC 8032) and returns the 64-byte signature. */
async function signEd(a: Account, message: Uint8Array) {
  const { rs, v } = await signRaw(
    a.address,
    bytesToHex(message),
    'PAYLOAD_ENCODING_HEXADECIMAL',
    'HASH_FUNCTION_NOT_APPLICABLE',
  );
  expect(v).toBe(0);
  return rs;
}

/** ECDSA over SHA-256 of `message`: valid, low S, and `v` recovers the account's key. */
function expectSecp256k1(a: Account, sig: { rs: Uint8Array; v: number }, message: Uint8Array) {
  const digest = sha256(message);
  expect(secp256k1.verify(sig.rs, digest, a.publicKey, { prehash: false, lowS: true })).toBe(true);
  const recovered = secp256k1.Signature.fromBytes(sig.rs).addRecoveryBit(sig.v).recoverPublicKey(digest);
  expect(bytesToHex(recovered.toBytes(true))).toBe(bytesToHex(a.publicKey));
}

describe('sign_raw_payload with the newer address formats as signWith', () => {
  it('Sui: a personal message signed over its intent digest passes Sui’s verifier for the address', async () => {
    const a = account('ADDRESS_FORMAT_SUI');
    const key = new SuiEd25519PublicKey(a.publicKey);
    expect(key.toSuiAddress()).toBe(a.address);
    const message = new TextEncoder().encode('countersign signs for Sui');
    const intent = messageWithIntent('PersonalMessage', bcs.vector(bcs.u8()).serialize(message).toBytes());
    const signature = await signEd(a, blake2b(intent, { dkLen: 32 }));
    const serialized = toSerializedSignature({ signature, signatureScheme: 'ED25519', publicKey: key });
    const signer = await verifyPersonalMessageSignature(message, serialized, { address: a.address });
    expect(signer.toSuiAddress()).toBe(a.address);
  });

  it('Aptos: the signature verifies under the key whose authentication key is the address', async () => {
    const a = account('ADDRESS_FORMAT_APTOS');
    const key = new AptosEd25519PublicKey(a.publicKey);
    expect(key.authKey().derivedAddress().toString()).toBe(a.address);
    const message = new TextEncoder().encode('APTOS\nmessage: countersign\nnonce: 1');
    const signature = new Ed25519Signature(await signEd(a, message));
    expect(key.verifySignature({ message, signature })).toBe(true);
    expect(key.verifySignature({ message: new Uint8Array([...message, 0]), signature })).toBe(false);
  });

  it('Stellar: the G… address itself verifies the signature of a transaction hash', async () => {
    const a = account('ADDRESS_FORMAT_XLM');
    const hash = sha256(new TextEncoder().encode('Test SDF Network ; September 2015 + an envelope'));
    const signature = await signEd(a, hash);
    const kp = Keypair.fromPublicKey(a.address);
    expect(kp.verify(Buffer.from(hash), Buffer.from(signature))).toBe(true);
    expect(new Uint8Array(kp.rawPublicKey())).toEqual(a.publicKey);
  });

  for (const [format, W] of [
    ['ADDRESS_FORMAT_TON_V3R2', WalletContractV3R2],
    ['ADDRESS_FORMAT_TON_V4R2', WalletContractV4],
  ] as const) {
    it(`TON (${format}): the wallet of the signing key is the address and @ton/crypto verifies`, async () => {
      const a = account(format);
      expect(W.create({ workchain: 0, publicKey: Buffer.from(a.publicKey) }).address.toString()).toBe(
        a.address,
      );
      const cellHash = sha256(new TextEncoder().encode(`${format} external message body`));
      const signature = await signEd(a, cellHash);
      expect(signVerify(Buffer.from(cellHash), Buffer.from(signature), Buffer.from(a.publicKey))).toBe(true);
    });
  }

  for (const [format, prefix] of [
    ['ADDRESS_FORMAT_COSMOS', 'cosmos'],
    ['ADDRESS_FORMAT_SEI', 'sei'],
  ] as const) {
    it(`${format}: an amino sign doc as TEXT_UTF8 + SHA256 gives a low-S signature of the address’s key`, async () => {
      const a = account(format);
      expect(pubkeyToAddress(encodeSecp256k1Pubkey(a.publicKey), prefix)).toBe(a.address);
      const doc = makeSignDoc(
        [
          {
            type: 'cosmos-sdk/MsgSend',
            value: { from_address: a.address, to_address: a.address, amount: [] },
          },
        ],
        { amount: [{ denom: prefix === 'sei' ? 'usei' : 'uatom', amount: '500' }], gas: '200000' },
        prefix === 'sei' ? 'pacific-1' : 'cosmoshub-4',
        'countersign',
        7,
        3,
      );
      const bytes = serializeSignDoc(doc);
      const sig = await signRaw(
        a.address,
        new TextDecoder().decode(bytes),
        'PAYLOAD_ENCODING_TEXT_UTF8',
        'HASH_FUNCTION_SHA256',
      );
      expectSecp256k1(a, sig, bytes);
    });
  }

  for (const [format, pubKeyHash] of [
    ['ADDRESS_FORMAT_DOGE_MAINNET', 0x1e],
    ['ADDRESS_FORMAT_DOGE_TESTNET', 0x71],
  ] as const) {
    it(`${format}: HEX + SHA256 signs with the key of the P2PKH address`, async () => {
      const a = account(format);
      const network = { ...bitcoin.networks.bitcoin, pubKeyHash, bech32: '' };
      expect(bitcoin.payments.p2pkh({ pubkey: a.publicKey, network }).address).toBe(a.address);
      const preimage = sha256(new TextEncoder().encode(`${format} legacy sighash preimage`));
      const sig = await signRaw(
        a.address,
        bytesToHex(preimage),
        'PAYLOAD_ENCODING_HEXADECIMAL',
        'HASH_FUNCTION_SHA256',
      );
      expectSecp256k1(a, sig, preimage);
    });
  }

  it('signet P2WPKH signs ECDSA and signet P2TR signs BIP-340 for the tweaked output key', async () => {
    const wpkh = account('ADDRESS_FORMAT_BITCOIN_SIGNET_P2WPKH');
    expect(wpkh.address).toMatch(/^tb1q/);
    const msg = sha256(new TextEncoder().encode('signet segwit'));
    expectSecp256k1(
      wpkh,
      await signRaw(wpkh.address, bytesToHex(msg), 'PAYLOAD_ENCODING_HEXADECIMAL', 'HASH_FUNCTION_SHA256'),
      msg,
    );

    const tr = account('ADDRESS_FORMAT_BITCOIN_SIGNET_P2TR');
    const decoded = bech32m.decode(tr.address as `${string}1${string}`);
    expect(decoded.prefix).toBe('tb');
    const outputKey = bech32m.fromWords(decoded.words.slice(1));
    const sighash = sha256(new TextEncoder().encode('signet taproot sighash'));
    const sig = await signRaw(
      tr.address,
      bytesToHex(sighash),
      'PAYLOAD_ENCODING_HEXADECIMAL',
      'HASH_FUNCTION_SHA256',
    );
    expect(schnorr.verify(sig.rs, sha256(sighash), outputKey)).toBe(true);
  });
});

describe('formats countersign does not derive', () => {
  it('refuses a P2WSH account with a 400 naming the addressFormat field, and writes no account', async () => {
    const c = h.service.credentials;
    const before = (await api.getWallets({})).wallets.length;
    const res = await post(
      h.baseUrl,
      c,
      '/public/v1/submit/create_wallet',
      envelope('ACTIVITY_TYPE_CREATE_WALLET', c.organizationId, {
        walletName: 'p2wsh',
        accounts: DEFAULT_BITCOIN_SIGNET_P2WSH_ACCOUNTS,
      }),
    );
    expect(res.status).toBe(400);
    expect(String(res.json['message'])).toContain('accounts.0.addressFormat');
    expect(String(res.json['message'])).toContain('ADDRESS_FORMAT_BITCOIN_SIGNET_P2TR');
    expect((await api.getWallets({})).wallets.length).toBe(before);
  });
});

describe('signWith in another case', () => {
  it('names the key only where the address format ignores case (hex, one-case bech32)', async () => {
    const defaults = new Map(h.service.credentials.accounts.map((a) => [a.addressFormat, a.address]));
    const address = (format: string) => defaults.get(format) ?? account(format).address;
    const ed25519 = new Set(['ADDRESS_FORMAT_SOLANA', 'ADDRESS_FORMAT_XLM']);
    const attempt = async (format: string, signWith: string) => {
      try {
        await api.signRawPayload({
          signWith,
          payload: '11'.repeat(32),
          encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
          hashFunction: ed25519.has(format) ? 'HASH_FUNCTION_NOT_APPLICABLE' : 'HASH_FUNCTION_SHA256',
        });
        return 'signed';
      } catch (e) {
        return /Could not find any resource to sign with/.test(String((e as Error).message))
          ? 'no such key'
          : String((e as Error).message);
      }
    };
    const eth = address('ADDRESS_FORMAT_ETHEREUM');
    const bech32 = address('ADDRESS_FORMAT_BITCOIN_SIGNET_P2WPKH');
    const outcomes = {
      'Ethereum, lower case': await attempt('ADDRESS_FORMAT_ETHEREUM', eth.toLowerCase()),
      'bech32, upper case': await attempt('ADDRESS_FORMAT_BITCOIN_SIGNET_P2WPKH', bech32.toUpperCase()),
      'bech32, mixed case': await attempt(
        'ADDRESS_FORMAT_BITCOIN_SIGNET_P2WPKH',
        `${bech32.slice(0, 3).toUpperCase()}${bech32.slice(3)}`,
      ),
      'Solana, upper case': await attempt(
        'ADDRESS_FORMAT_SOLANA',
        address('ADDRESS_FORMAT_SOLANA').toUpperCase(),
      ),
      'Tron, lower case': await attempt('ADDRESS_FORMAT_TRON', address('ADDRESS_FORMAT_TRON').toLowerCase()),
      'Dogecoin, lower case': await attempt(
        'ADDRESS_FORMAT_DOGE_MAINNET',
        address('ADDRESS_FORMAT_DOGE_MAINNET').toLowerCase(),
      ),
      'Stellar, lower case': await attempt('ADDRESS_FORMAT_XLM', address('ADDRESS_FORMAT_XLM').toLowerCase()),
    };
    expect(outcomes).toEqual({
      'Ethereum, lower case': 'signed',
      'bech32, upper case': 'signed',
      'bech32, mixed case': 'no such key',
      'Solana, upper case': 'no such key',
      'Tron, lower case': 'no such key',
      'Dogecoin, lower case': 'no such key',
      'Stellar, lower case': 'no such key',
    });
  });
});
