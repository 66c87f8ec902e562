import { describe, expect, it } from 'vitest';
import { CountersignError } from '../errors.js';
import { checkOutboundUrl } from './guard.js';

const strict = { allowPrivateNetwork: false };
const dev = { allowPrivateNetwork: true };

function refusal(fn: () => unknown): CountersignError {
  try {
    fn();
  } catch (e) {
    if (e instanceof CountersignError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('checkOutboundUrl', () => {
  it('accepts https to a public name or address', () => {
    expect(checkOutboundUrl('https://hooks.example.com/x', strict).hostname).toBe('hooks.example.com');
    expect(checkOutboundUrl('https://8.8.8.8/x', strict).hostname).toBe('8.8.8.8');
  });

  it.each([
    ['http://hooks.example.com/', /must be an https URL/],
    ['https://127.0.0.1/', /loopback address \(allowed only with --allow-private-network\)/],
    ['https://[::1]:8443/', /loopback/],
    ['https://localhost/', /loopback/],
    ['https://api.localhost/', /loopback/],
    ['https://10.0.0.1/', /private address/],
    ['https://169.254.169.254/latest/meta-data', /link-local address, which is never dialled/],
    ['https://[::ffff:169.254.169.254]/', /link-local/],
    ['https://0.0.0.0/', /unspecified/],
    ['https://user:pw@hooks.example.com/', /must not carry credentials/],
    ['ftp://hooks.example.com/', /https URL/],
    ['not a url', /not an absolute URL/],
  ])('refuses %s without the flag, naming the field', (url, reason) => {
    const e = refusal(() => checkOutboundUrl(url, strict, 'parameters.url'));
    expect(e.code).toBe('OUTBOUND_URL_REFUSED');
    expect(e.field).toBe('parameters.url');
    expect(e.message).toMatch(reason);
    expect(e.message.startsWith('parameters.url: ')).toBe(true);
  });

  it('with --allow-private-network accepts http, loopback and private, still not link-local', () => {
    expect(checkOutboundUrl('http://127.0.0.1:9/x', dev).port).toBe('9');
    expect(checkOutboundUrl('http://localhost/', dev).hostname).toBe('localhost');
    expect(checkOutboundUrl('https://10.0.0.1/', dev).hostname).toBe('10.0.0.1');
    expect(refusal(() => checkOutboundUrl('http://169.254.169.254/', dev)).code).toBe('OUTBOUND_URL_REFUSED');
    expect(refusal(() => checkOutboundUrl('http://[ff02::1]/', dev)).code).toBe('OUTBOUND_URL_REFUSED');
  });
});
