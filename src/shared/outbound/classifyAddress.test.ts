import { describe, expect, it } from 'vitest';
import { classifyAddress, type AddressClass } from './classifyAddress.js';

const cases: [string, AddressClass][] = [
  ['8.8.8.8', 'public'],
  ['1.1.1.1', 'public'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['10.0.0.1', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['172.32.0.1', 'public'],
  ['192.168.1.1', 'private'],
  ['100.64.0.1', 'private'],
  ['169.254.169.254', 'link-local'],
  ['0.0.0.0', 'unspecified'],
  ['224.0.0.1', 'multicast'],
  ['255.255.255.255', 'reserved'],
  ['192.0.2.7', 'reserved'],
  ['::1', 'loopback'],
  ['[::1]', 'loopback'],
  ['::', 'unspecified'],
  ['fe80::1%eth0', 'link-local'],
  ['fd00::1', 'private'],
  ['ff02::1', 'multicast'],
  ['2001:db8::1', 'reserved'],
  ['2606:4700:4700::1111', 'public'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:10.1.2.3', 'private'],
  ['0:0:0:0:0:ffff:169.254.169.254', 'link-local'],
  ['::ffff:8.8.8.8', 'public'],
  ['64:ff9b::a9fe:a9fe', 'link-local'],
  ['2002:c0a8:0101::1', 'private'],
  ['2002:0808:0808::1', 'public'],
];

describe('classifyAddress', () => {
  it.each(cases)('classifies %s as %s', (address, cls) => {
    expect(classifyAddress(address)).toBe(cls);
  });

  it('throws on something that is not an IP address', () => {
    expect(() => classifyAddress('example.com')).toThrow(/not an IP address/);
  });
});
