/** The toy chain's daemon side: its proto message (`ToyTransaction { bytes unsigned = 1; }`) to the adapter. */
import { bytesToHex } from '../../src/shared/encoding.js';
import { missing } from '../../src/shared/errors.js';
import type { DaemonChain } from '../../src/daemon/chains/chain.js';
import { toyAdapter, type ToyFields, type ToyTransaction } from './adapter.js';

export const toyChain: DaemonChain<ToyTransaction, ToyFields, string, { readonly unsigned: Uint8Array }> = {
  member: 'toy',
  transactionType: 'TRANSACTION_TYPE_TOY',
  adapter: toyAdapter,
  input: (m) => {
    if (m === undefined || m.unsigned.length === 0) throw missing('toy.unsigned');
    const unsigned = new Uint8Array(m.unsigned);
    return { tx: toyAdapter.parse(unsigned), unsigned };
  },
  signer: (ctx, organizationId, req) => ctx.signers.resolve(organizationId, req.signWith),
  hash: (v) => bytesToHex(v.hash),
};
