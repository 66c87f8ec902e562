import { serializeMessage } from './serializeMessage.js';
import { SIGNATURE_LENGTH, type SolanaMessage, type SolanaTransaction } from './types.js';

/** A transaction of `message` with every signature slot zeroed (what `sign_transaction` is sent). */
export function unsignedTransaction(message: SolanaMessage): SolanaTransaction {
  const signatures = Array.from(
    { length: message.header.numRequiredSignatures },
    () => new Uint8Array(SIGNATURE_LENGTH),
  );
  return { message, messageBytes: serializeMessage(message), signatures };
}
