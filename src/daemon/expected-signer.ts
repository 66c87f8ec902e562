/**
 * The Ethereum address a signature must recover to, from `sign_with` (reference 6.2): an address
 * as given, or a private-key id looked up once with `query/get_private_key` (its
 * ADDRESS_FORMAT_ETHEREUM address; keys never change address, so the answer is cached).
 */
import { isUuid } from '../shared/uuid.js';
import { parseAddress, toChecksumAddress } from '../../chains/ethereum/index.js';
import type { PublicApiClient } from '../client/client.js';
import { CountersignError, invalid, missing } from '../shared/errors.js';

const ETH_ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
const CACHE_LIMIT = 10_000;

interface GetPrivateKeyResponse {
  privateKey?: { addresses?: { format?: unknown; address?: unknown }[] };
}

/** Resolves and caches the expected Ethereum signer of a `sign_with`. */
export class ExpectedSignerResolver {
  readonly #client: PublicApiClient;
  readonly #cache = new Map<string, string>();

  constructor(client: PublicApiClient) {
    this.#client = client;
  }

  /** The EIP-55 address signatures must recover to; FIELD_INVALID when none can be known. */
  async resolve(organizationId: string, signWith: string): Promise<string> {
    if (signWith === '') throw missing('sign_with');
    if (ETH_ADDRESS_RE.test(signWith)) return toChecksumAddress(parseAddress(signWith, 'sign_with'));
    if (!isUuid(signWith)) {
      throw invalid('sign_with', 'must be an Ethereum address (0x + 40 hex) or a private key id (UUID)');
    }
    const cacheKey = `${organizationId}\u0000${signWith.toLowerCase()}`;
    const cached = this.#cache.get(cacheKey);
    if (cached !== undefined) return cached;
    const res = await this.#client.query<GetPrivateKeyResponse>('get_private_key', {
      organizationId,
      privateKeyId: signWith,
    });
    const entry = res.privateKey?.addresses?.find((a) => a.format === 'ADDRESS_FORMAT_ETHEREUM');
    if (entry === undefined) {
      throw invalid('sign_with', `private key ${signWith} has no Ethereum address`);
    }
    if (typeof entry.address !== 'string' || !ETH_ADDRESS_RE.test(entry.address)) {
      throw new CountersignError('UPSTREAM_ERROR', 'get_private_key returned a malformed Ethereum address');
    }
    const address = toChecksumAddress(parseAddress(entry.address, 'privateKey.addresses.address'));
    if (this.#cache.size >= CACHE_LIMIT) this.#cache.clear();
    this.#cache.set(cacheKey, address);
    return address;
  }
}
