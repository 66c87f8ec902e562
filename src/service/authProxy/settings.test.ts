import { describe, expect, it } from 'vitest';
import { applySettings, DEFAULT_SETTINGS } from './settings.js';

/** Parameters as the public API parses them (JSON.parse makes `__proto__` an own key). */
const params = (json: string) => JSON.parse(json) as Record<string, unknown>;

describe('applySettings', () => {
  it('keeps every entry of oauthClientIds', () => {
    const s = applySettings(
      DEFAULT_SETTINGS,
      params('{"oauthClientIds": {"google": "g-1", "apple": "a-1"}}'),
    );
    expect(s.oauthClientIds).toEqual({ google: 'g-1', apple: 'a-1' });
  });

  it('refuses an entry named __proto__ (it would set the prototype, not add an entry), naming it', () => {
    for (const json of [
      '{"oauthClientIds": {"google": "g-1", "__proto__": "x"}}',
      '{"oauth2Credentials": {"__proto__": {"clientId": "c"}}}',
    ])
      expect(() => applySettings(DEFAULT_SETTINGS, params(json))).toThrow(
        /^parameters\.oauth(ClientIds|2Credentials)\.__proto__: is not an allowed key$/,
      );
  });
});
