/**
 * SignTransaction's `bitcoin` member: `bitcoin.unsigned` is a BIP-174 (v0) PSBT, parsed strictly;
 * the signer is sign_with's key (its public key learnt through the public API), whose inputs are
 * signed — in raw-payload mode one activity per signature scheme — and, with `finalize`, the
 * network transaction is extracted from the verified PSBT.
 */
import {
  assertFinalizable,
  bitcoinAdapter,
  fee,
  finalizeAndExtract,
  inRequest,
  isAddressOf,
  parsePsbt,
  signingPlan,
  type BitcoinAdapterSigner,
  type BitcoinNetwork,
  type BitcoinTransactionFields,
  type Psbt,
  type RequestFields,
} from '../../../chains/bitcoin/index.js';
import { bytesToHex } from '../../shared/encoding.js';
import { missing } from '../../shared/errors.js';
import type { BitcoinTransactionMessage } from '../proto.js';
import { resolveBitcoinKey, signingHandle, type BitcoinKey } from './bitcoin-key.js';
import { enumValue, type ChainInput, type DaemonChain, type SigningGroup } from './chain.js';

const FIELDS: RequestFields = { unsignedField: 'bitcoin.unsigned', signWithField: 'sign_with' };

const NETWORKS = {
  BITCOIN_NETWORK_UNSPECIFIED: 'mainnet',
  BITCOIN_NETWORK_MAINNET: 'mainnet',
  BITCOIN_NETWORK_TESTNET: 'testnet',
  BITCOIN_NETWORK_REGTEST: 'regtest',
} as const satisfies Record<string, BitcoinNetwork>;

interface BitcoinInput extends ChainInput<Psbt> {
  /** The request's network; undefined for an activity read back, whose intent names none (the key's then). */
  readonly network: BitcoinNetwork | undefined;
  readonly finalize: boolean;
}

interface BitcoinDaemonSigner extends BitcoinAdapterSigner {
  readonly key: BitcoinKey;
}

export const bitcoinChain: DaemonChain<
  Psbt,
  BitcoinTransactionFields,
  BitcoinDaemonSigner,
  BitcoinTransactionMessage,
  BitcoinInput
> = {
  member: 'bitcoin',
  transactionType: 'TRANSACTION_TYPE_BITCOIN',
  adapter: bitcoinAdapter,
  input: (b) => {
    if (b === undefined) throw missing('bitcoin');
    if (b.unsigned.length === 0) throw missing('bitcoin.unsigned');
    const network = enumValue(NETWORKS, b.network, 'bitcoin.network', 'network');
    const unsigned = new Uint8Array(b.unsigned);
    return { tx: inRequest(FIELDS, () => parsePsbt(unsigned)), unsigned, network, finalize: b.finalize };
  },
  inputOf: (unsigned) => ({ tx: parsePsbt(unsigned), unsigned, network: undefined, finalize: false }),
  signer: async (ctx, organizationId, req, input) => {
    const key = await resolveBitcoinKey(ctx, organizationId, req.signWith);
    const network = input.network ?? key.signWithNetwork ?? 'mainnet';
    const address = isAddressOf(req.signWith, key.publicKey, network) ? req.signWith : undefined;
    const signer = { publicKey: key.publicKey, network, key, ...(address === undefined ? {} : { address }) };
    inRequest(FIELDS, () => fee(input.tx));
    if (input.finalize) inRequest(FIELDS, () => assertFinalizable(input.tx, signingPlan(input.tx, signer)));
    return signer;
  },
  inRequest: (step) => inRequest(FIELDS, step),
  groups: async (ctx, organizationId, req, mode, signer, digests) => {
    const all = digests.map((_, i) => i);
    if (mode === 'SIGNING_MODE_SIGN_TRANSACTION')
      return [{ kind: 'transaction', signWith: req.signWith, digests: all, method: 'SignTransaction' }];
    // The public API signs BIP-340 Schnorr (with the BIP-86 tweak) only when signWith is a P2TR
    // address (reference 6.1), ECDSA otherwise; so each scheme needs its own handle, and every
    // handle is found before anything is submitted, so a missing one leaves nothing signed.
    const groups: SigningGroup[] = [];
    for (const [scheme, name] of [
      ['ECDSA_SECP256K1', 'ecdsa'],
      ['SCHNORR_BIP340', 'schnorr'],
    ] as const) {
      const these = all.filter((i) => digests[i]?.scheme === scheme);
      if (these.length === 0) continue;
      const signWith = await signingHandle(
        ctx,
        organizationId,
        req.signWith,
        signer.key,
        signer.network,
        name,
      );
      groups.push({ kind: 'raw', signWith, digests: these, method: `SignTransaction:bitcoin:${name}` });
    }
    return groups;
  },
  requestFields: (input) => ({ network: input.network, finalize: input.finalize }),
  logFields: (input, signer) => ({ network: signer.network, finalize: input.finalize }),
  hash: (v) => bytesToHex(v.hash),
  finish: (signed, verified, input) => {
    if (!input.finalize) return { signed, hash: bytesToHex(verified.hash) };
    const extracted = inRequest(FIELDS, () => finalizeAndExtract(parsePsbt(signed)));
    return { signed: extracted.transaction, hash: bytesToHex(extracted.txid) };
  },
};
