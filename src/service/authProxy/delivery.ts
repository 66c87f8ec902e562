/**
 * Delivery of OTP codes: mail through an SMTP server (nodemailer) and texts through Twilio's
 * Messages API (`POST {base}/2010-04-01/Accounts/{sid}/Messages.json`, form-encoded To/From/Body,
 * HTTP basic auth), the base URL configurable so any compatible provider (or a test double on
 * loopback) can take it. Both pass the outbound guard: the SMTP host is resolved and checked here
 * and dialled by address; plain `smtp://` must upgrade with STARTTLS unless --allow-private-network.
 * Neither the code nor the message text is ever logged.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { CountersignError } from '../../shared/errors.js';
import { classifyAddress } from '../../shared/outbound/classifyAddress.js';
import { addressAllowed, refusalReason, type OutboundPolicy } from '../../shared/outbound/guard.js';
import { outboundRequest } from '../../shared/outbound/outboundRequest.js';
import type { OutgoingEmail, OutgoingSms } from './context.js';

function refused(field: string, reason: string): CountersignError {
  return new CountersignError('OUTBOUND_URL_REFUSED', `${field}: ${reason}`, { field });
}

/** Checks `--smtp-url` (scheme, host, port) without dialling; returns the parsed URL. */
export function parseSmtpUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refused('smtp-url', 'is not a URL (smtp://user:pass@host:port or smtps://…)');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:')
    throw refused('smtp-url', 'must be smtp:// or smtps://');
  if (url.hostname === '') throw refused('smtp-url', 'has no host');
  return url;
}

/** A sender of mails through `smtpUrl` from `from`. */
export function smtpSender(opts: {
  readonly url: string;
  readonly from: string;
  readonly policy: OutboundPolicy;
}): (m: OutgoingEmail) => Promise<void> {
  const url = parseSmtpUrl(opts.url);
  const secure = url.protocol === 'smtps:';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = url.port === '' ? (secure ? 465 : 587) : Number(url.port);
  const auth =
    url.username === ''
      ? undefined
      : { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) };
  return async (m) => {
    // Resolved and checked per mail, then dialled by address, so DNS cannot move it in between.
    let address = host;
    if (isIP(host) === 0) {
      try {
        address = (await lookup(host)).address;
      } catch (e) {
        throw new CountersignError('OUTBOUND_REQUEST_FAILED', `smtp-url: could not resolve ${host}`, {
          cause: e,
        });
      }
    }
    const cls = classifyAddress(address);
    if (!addressAllowed(cls, opts.policy)) throw refused('smtp-url', refusalReason(cls));
    // nodemailer loads with the first mail, not with every process that could send one.
    const { default: nodemailer } = await import('nodemailer');
    const transport = nodemailer.createTransport({
      host: address,
      port,
      secure,
      // Without --allow-private-network a plain connection must upgrade (STARTTLS) before AUTH/DATA.
      requireTLS: !secure && !opts.policy.allowPrivateNetwork,
      ignoreTLS: !secure && opts.policy.allowPrivateNetwork,
      ...(auth === undefined ? {} : { auth }),
      tls: { servername: isIP(host) === 0 ? host : undefined },
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
      logger: false,
    });
    try {
      await transport.sendMail({ from: opts.from, to: m.to, subject: m.subject, text: m.text });
    } catch (e) {
      // nodemailer's error may quote the server's reply; keep only its code for the caller.
      const code = (e as { code?: unknown }).code;
      throw new CountersignError(
        'OUTBOUND_REQUEST_FAILED',
        `the SMTP server did not accept the mail${typeof code === 'string' ? ` (${code})` : ''}`,
      );
    } finally {
      transport.close();
    }
  };
}

/** A sender of texts through a Twilio-compatible Messages API. */
export function twilioSender(opts: {
  readonly baseUrl: string;
  readonly accountSid: string;
  readonly authToken: string;
  readonly from: string;
  readonly policy: OutboundPolicy;
}): (m: OutgoingSms) => Promise<void> {
  const base = opts.baseUrl.replace(/\/+$/, '');
  const url = `${base}/2010-04-01/Accounts/${encodeURIComponent(opts.accountSid)}/Messages.json`;
  const authorization = `Basic ${Buffer.from(`${opts.accountSid}:${opts.authToken}`).toString('base64')}`;
  return async (m) => {
    const body = new URLSearchParams({ To: m.to, From: opts.from, Body: m.text }).toString();
    const res = await outboundRequest({
      url,
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization,
        accept: 'application/json',
      },
      body,
      policy: opts.policy,
      field: 'sms-url',
    });
    if (res.status < 200 || res.status > 299)
      throw new CountersignError(
        'OUTBOUND_REQUEST_FAILED',
        `the SMS provider refused the message (HTTP ${res.status})`,
      );
  };
}
