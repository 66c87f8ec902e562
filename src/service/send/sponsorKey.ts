/**
 * The gas station's sponsor key: a secp256k1 key the service holds (sealed by the key vault like every
 * other key) that submits sponsored batches and pays their gas. One key for every chain, so an
 * operator funds one address per chain. Created on first start, never exported.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import type { Logger } from 'pino';
import { addressFromPublicKey } from '../../../chains/ethereum/index.js';
import { bytesToHex, hexToBytes, zeroize } from '../../shared/encoding.js';
import { CountersignError } from '../../shared/errors.js';
import type { KeyVault } from '../keys/KeyVault.js';
import type { ServiceKeyRecord, Store } from '../store/types.js';

/** The vault record id (and AAD) of the sponsor key. */
export const SPONSOR_KEY_ID = 'gas-station-sponsor-secp256k1';

export interface SponsorKey {
  /** Lower-case 0x address that pays for sponsored sends. */
  readonly address: `0x${string}`;
  readonly record: ServiceKeyRecord;
}

function addressOf(publicKeyHex: string): `0x${string}` {
  return addressFromPublicKey(
    hexToBytes(publicKeyHex, 'sponsorKey.publicKey'),
  ).toLowerCase() as `0x${string}`;
}

/** Loads the sponsor key, creating it on first use, and checks it opens to its public key. */
export async function loadOrCreateSponsorKey(
  store: Store,
  vault: KeyVault,
  logger: Logger,
): Promise<SponsorKey> {
  let record = await store.getServiceKey(SPONSOR_KEY_ID);
  if (record === undefined) {
    const secret = secp256k1.utils.randomSecretKey();
    try {
      const fresh = {
        id: SPONSOR_KEY_ID,
        publicKey: bytesToHex(secp256k1.getPublicKey(secret, false)),
        sealedKey: vault.seal(secret, SPONSOR_KEY_ID),
        createdAtMs: Date.now(),
      };
      record = await store.write(async (tx) => await tx.insertServiceKeyIfAbsent(fresh));
    } finally {
      zeroize(secret);
    }
    logger.info({ sponsorAddress: addressOf(record.publicKey) }, 'created the gas-station sponsor key');
  }
  const key: SponsorKey = { address: addressOf(record.publicKey), record };
  const secret = openSponsorKey(vault, key);
  zeroize(secret);
  return key;
}

/** The sponsor's private scalar; the caller zeroes it after use. Fails if it does not match its record. */
export function openSponsorKey(vault: KeyVault, key: SponsorKey): Uint8Array {
  const secret = vault.open(key.record.sealedKey, key.record.id);
  if (
    !secp256k1.utils.isValidSecretKey(secret) ||
    bytesToHex(secp256k1.getPublicKey(secret, false)) !== key.record.publicKey
  ) {
    zeroize(secret);
    throw new CountersignError(
      'KEY_MATERIAL_UNAVAILABLE',
      'the gas-station sponsor key does not match its public key',
    );
  }
  return secret;
}
