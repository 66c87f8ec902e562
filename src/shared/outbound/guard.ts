/**
 * The one outbound guard (DESIGN.md "Edges"): every URL the service dials on a client's or an
 * operator's behalf — webhooks, OIDC discovery and JWKS, OAuth token endpoints — passes it. By
 * default only https to public addresses; `--allow-private-network` adds http and loopback or
 * private addresses for development. Link-local (cloud metadata), multicast, unspecified and
 * reserved addresses are refused even then.
 */
import { isIP } from 'node:net';
import { CountersignError } from '../errors.js';
import { classifyAddress, type AddressClass } from './classifyAddress.js';

export interface OutboundPolicy {
  /** `--allow-private-network`: http, loopback and private addresses allowed. */
  readonly allowPrivateNetwork: boolean;
}

/** Whether an address of this class may be dialled under the policy. */
export function addressAllowed(cls: AddressClass, policy: OutboundPolicy): boolean {
  if (cls === 'public') return true;
  return policy.allowPrivateNetwork && (cls === 'loopback' || cls === 'private');
}

function refuse(field: string, reason: string): CountersignError {
  return new CountersignError('OUTBOUND_URL_REFUSED', `${field}: ${reason}`, { field });
}

/**
 * Checks what a URL says before anything is resolved: scheme, credentials, and a host that is an
 * IP literal or a name reserved for the local machine. Names are checked again, after DNS, when
 * dialled (`outboundRequest`). `field` names the request field the URL came from.
 */
export function checkOutboundUrl(raw: string, policy: OutboundPolicy, field = 'url'): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse(field, 'is not an absolute URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowPrivateNetwork)) {
    throw refuse(
      field,
      policy.allowPrivateNetwork
        ? 'must be an http or https URL'
        : 'must be an https URL (http is allowed only with --allow-private-network)',
    );
  }
  if (url.username !== '' || url.password !== '') throw refuse(field, 'must not carry credentials');
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (host === '') throw refuse(field, 'has no host');
  if (isIP(host) !== 0) {
    const cls = classifyAddress(host);
    if (!addressAllowed(cls, policy)) throw refuse(field, refusalReason(cls));
  } else if (/(^|\.)localhost\.?$/i.test(host) && !policy.allowPrivateNetwork) {
    throw refuse(field, refusalReason('loopback'));
  }
  return url;
}

/** The text of a refusal for an address class, saying how to allow it when that is possible. */
export function refusalReason(cls: AddressClass): string {
  return cls === 'loopback' || cls === 'private'
    ? `points to a ${cls} address (allowed only with --allow-private-network)`
    : `points to a ${cls} address, which is never dialled`;
}
