/**
 * Who calls the gRPC daemon and what each caller may do (`--grpc-clients`): a caller is known by
 * its TLS client certificate (subject or SAN) or a bearer token (only its SHA-256 is configured),
 * and is allowed a set of `sign_with` values, chains and methods. A caller may name the API key the
 * daemon stamps its requests with, so the service's policies and activity records see that caller.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { PeerCertificate } from 'node:tls';
import { canonicalAddress } from '../shared/addressMatch.js';
import { CountersignError } from '../shared/errors.js';

export const CALLER_CHAINS = ['ethereum', 'solana', 'tron', 'bitcoin', 'tempo'] as const;
export type CallerChain = (typeof CALLER_CHAINS)[number];

export const SIGNER_METHODS = [
  'SignTransaction',
  'SignRawPayloads',
  'SignMessage',
  'GetActivity',
  'WatchActivity',
  'EvaluatePolicies',
  'SendEthTransaction',
  'WatchSendTransaction',
] as const;
export type SignerMethod = (typeof SIGNER_METHODS)[number];

export interface ApiKeyFileContent {
  readonly apiPublicKey: string;
  readonly apiPrivateKey: string;
  readonly organizationId?: string;
}

export interface CallerEntry {
  readonly name: string;
  /** `CN=…[, O=…]` matched against the certificate's subject, or `DNS:…`/`URI:…`/`IP Address:…` against its SANs. */
  readonly certificateSubject: string | undefined;
  /** Lower-case hex SHA-256 of the bearer token. */
  readonly tokenSha256: Uint8Array | undefined;
  /** `*` or addresses / private-key ids, in `canonicalAddress` form. */
  readonly signWith: ReadonlySet<string> | '*';
  readonly chains: ReadonlySet<CallerChain> | undefined;
  readonly methods: ReadonlySet<SignerMethod> | undefined;
  readonly apiKey: ApiKeyFileContent | undefined;
}

const bad = (field: string, reason: string) =>
  new CountersignError('CONFIG_INVALID', `--grpc-clients: ${field}: ${reason}`, { field: 'grpc-clients' });

function stringList(v: unknown, field: string): string[] {
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || x === ''))
    throw bad(field, 'must be an array of non-empty strings');
  return v as string[];
}

/** Reads a JSON file with `apiPublicKey` and `apiPrivateKey` (and optionally `organizationId`). */
export function readApiKeyFile(path: string, field: string): ApiKeyFileContent {
  let v: unknown;
  try {
    v = JSON.parse(readFileSync(path, 'utf8'));
  } catch (cause) {
    throw new CountersignError('CONFIG_INVALID', `${field}: ${path} is unreadable or not JSON`, {
      cause,
      field,
    });
  }
  const o = (typeof v === 'object' && v !== null ? v : {}) as Record<string, unknown>;
  if (typeof o.apiPublicKey !== 'string' || typeof o.apiPrivateKey !== 'string')
    throw new CountersignError('CONFIG_INVALID', `${field}: ${path} needs apiPublicKey and apiPrivateKey`, {
      field,
    });
  return {
    apiPublicKey: o.apiPublicKey,
    apiPrivateKey: o.apiPrivateKey,
    ...(typeof o.organizationId === 'string' ? { organizationId: o.organizationId } : {}),
  };
}

/** Loads and checks the clients file; relative `apiKeyFile` paths are relative to it. */
export function loadCallers(path: string): CallerEntry[] {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'));
  } catch (cause) {
    throw new CountersignError('CONFIG_INVALID', `--grpc-clients: ${path} is unreadable or not JSON`, {
      cause,
      field: 'grpc-clients',
    });
  }
  const clients = (doc as { clients?: unknown } | null)?.clients;
  if (!Array.isArray(clients) || clients.length === 0) throw bad('clients', 'must be a non-empty array');
  const names = new Set<string>();
  return clients.map((raw: unknown, i): CallerEntry => {
    const f = `clients[${i}]`;
    if (typeof raw !== 'object' || raw === null) throw bad(f, 'must be an object');
    const c = raw as Record<string, unknown>;
    if (typeof c.name !== 'string' || c.name === '') throw bad(`${f}.name`, 'is required');
    if (names.has(c.name)) throw bad(`${f}.name`, `'${c.name}' is used twice`);
    names.add(c.name);
    if (
      c.certificateSubject !== undefined &&
      (typeof c.certificateSubject !== 'string' || c.certificateSubject === '')
    )
      throw bad(`${f}.certificateSubject`, 'must be a non-empty string');
    let token: Uint8Array | undefined;
    if (c.tokenSha256 !== undefined) {
      if (typeof c.tokenSha256 !== 'string' || !/^[0-9a-fA-F]{64}$/.test(c.tokenSha256))
        throw bad(`${f}.tokenSha256`, 'must be 64 hex digits (the SHA-256 of the token)');
      token = Buffer.from(c.tokenSha256, 'hex');
    }
    if (c.certificateSubject === undefined && token === undefined)
      throw bad(f, 'needs certificateSubject or tokenSha256');
    const signWith = stringList(c.signWith, `${f}.signWith`);
    const chains = c.chains === undefined ? undefined : stringList(c.chains, `${f}.chains`);
    for (const ch of chains ?? [])
      if (!(CALLER_CHAINS as readonly string[]).includes(ch))
        throw bad(`${f}.chains`, `'${ch}' is not one of ${CALLER_CHAINS.join(', ')}`);
    const methods = c.methods === undefined ? undefined : stringList(c.methods, `${f}.methods`);
    for (const m of methods ?? [])
      if (!(SIGNER_METHODS as readonly string[]).includes(m))
        throw bad(`${f}.methods`, `'${m}' is not one of ${SIGNER_METHODS.join(', ')}`);
    let apiKey: ApiKeyFileContent | undefined;
    if (c.apiKeyFile !== undefined) {
      if (typeof c.apiKeyFile !== 'string') throw bad(`${f}.apiKeyFile`, 'must be a path');
      const p = isAbsolute(c.apiKeyFile) ? c.apiKeyFile : resolve(dirname(path), c.apiKeyFile);
      apiKey = readApiKeyFile(p, `--grpc-clients ${f}.apiKeyFile`);
    }
    return {
      name: c.name,
      certificateSubject: c.certificateSubject as string | undefined,
      tokenSha256: token,
      signWith: signWith.includes('*') ? '*' : new Set(signWith.map(canonicalAddress)),
      chains: chains === undefined ? undefined : new Set(chains as CallerChain[]),
      methods: methods === undefined ? undefined : new Set(methods as SignerMethod[]),
      apiKey,
    };
  });
}

/** Whether a certificate matches a configured `certificateSubject`. */
export function certificateMatches(cert: PeerCertificate, wanted: string): boolean {
  if (/^(DNS|URI|IP Address|email):/i.test(wanted)) {
    const sans = (cert.subjectaltname ?? '').split(/,\s*/);
    return sans.some((s) => s.toLowerCase() === wanted.toLowerCase());
  }
  // Every `K=V` pair given must equal the subject's attribute of that name.
  const subject = (cert.subject ?? {}) as unknown as Record<string, string | string[] | undefined>;
  const pairs = wanted.split(/,\s*/).map((p) => p.split('='));
  return pairs.every(([k, ...v]) => {
    const have = subject[(k ?? '').trim()];
    const value = v.join('=').trim();
    return Array.isArray(have) ? have.includes(value) : have === value;
  });
}

/** The configured caller behind a call, or undefined when none matches. */
export function identifyCaller(
  callers: readonly CallerEntry[],
  peer: { readonly certificate: PeerCertificate | undefined; readonly bearerToken: string | undefined },
): CallerEntry | undefined {
  const tokenHash =
    peer.bearerToken === undefined ? undefined : createHash('sha256').update(peer.bearerToken).digest();
  for (const c of callers) {
    if (tokenHash !== undefined && c.tokenSha256 !== undefined && timingSafeEqual(tokenHash, c.tokenSha256))
      return c;
  }
  const cert = peer.certificate;
  if (cert !== undefined && cert.subject !== undefined)
    for (const c of callers)
      if (c.certificateSubject !== undefined && certificateMatches(cert, c.certificateSubject)) return c;
  return undefined;
}

/** What a call asks to do, read from its request before anything is submitted. */
export interface CallIntent {
  readonly method: SignerMethod;
  readonly signWith: readonly string[];
  readonly chain: CallerChain | undefined;
}

/** Refuses (PERMISSION_DENIED, naming why) what the caller's entry does not allow. */
export function authorizeCall(caller: CallerEntry, intent: CallIntent): void {
  const deny = (reason: string) =>
    new CountersignError('CALLER_NOT_ALLOWED', `caller '${caller.name}' ${reason}`, {
      meta: { caller: caller.name },
    });
  if (caller.methods !== undefined && !caller.methods.has(intent.method))
    throw deny(`may not call ${intent.method}`);
  if (intent.chain !== undefined && caller.chains !== undefined && !caller.chains.has(intent.chain))
    throw deny(`may not sign ${intent.chain} transactions`);
  if (caller.signWith !== '*') {
    const allowed = caller.signWith;
    for (const s of intent.signWith)
      if (s !== '' && !allowed.has(canonicalAddress(s))) throw deny(`may not sign with ${s}`);
  }
}

type Req = Record<string, unknown>;
const str = (v: unknown) => (typeof v === 'string' ? v : '');

/** Reads the method's sign_with values and chain from a decoded request (proto-loader, camelCase, oneofs). */
export function callIntentOf(method: SignerMethod, req: Req): CallIntent {
  switch (method) {
    case 'SignTransaction': {
      const chain = str(req.transaction);
      return {
        method,
        signWith: [str(req.signWith), str(req.feePayerSignWith)],
        chain: (CALLER_CHAINS as readonly string[]).includes(chain) ? (chain as CallerChain) : undefined,
      };
    }
    case 'SignRawPayloads':
      return { method, signWith: [str(req.signWith)], chain: undefined };
    case 'SignMessage':
      return { method, signWith: [str(req.signWith)], chain: 'ethereum' };
    case 'SendEthTransaction':
      return { method, signWith: [str(req.from)], chain: 'ethereum' };
    case 'EvaluatePolicies': {
      const which = str(req.request) as
        'signTransaction' | 'signRawPayloads' | 'signMessage' | 'sendEthTransaction' | '';
      const inner = (which === '' ? {} : (req[which] ?? {})) as Req;
      const innerMethod: Record<string, SignerMethod> = {
        signTransaction: 'SignTransaction',
        signRawPayloads: 'SignRawPayloads',
        signMessage: 'SignMessage',
        sendEthTransaction: 'SendEthTransaction',
      };
      const m = innerMethod[which];
      const i = m === undefined ? undefined : callIntentOf(m, inner);
      return { method, signWith: i?.signWith ?? [], chain: i?.chain };
    }
    case 'GetActivity':
    case 'WatchActivity':
    case 'WatchSendTransaction':
      return { method, signWith: [], chain: undefined };
  }
}
