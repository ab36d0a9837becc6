import fc from 'fast-check';
import { botTokenProblem, isBotToken, parseBotToken } from '../../src/client';

const ID = '0b7e6a52-3f0e-4c8e-9d51-2f8a1c3b4d5e';
const SECRET = 'abc123XYZ_-0123456789abcdefghijklmnopqrstuv'; // 43 characters
const TOKEN = `svc_bot_${ID}_${SECRET}`;
const base64url = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-'.split(''));

describe('bot tokens', () => {
  it('parses the bot id and the 6-character tokenPrefix', () => {
    expect(SECRET).toHaveLength(43);
    expect(isBotToken(TOKEN)).toBe(true);
    expect(parseBotToken(TOKEN)).toEqual({ botId: ID, tokenPrefix: 'abc123' });
  });

  it('holds for any UUID and any 43 characters of [A-Za-z0-9_-]', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.array(base64url, { minLength: 43, maxLength: 43 }), (id, chars) => {
        const secret = chars.join('');
        expect(parseBotToken(`svc_bot_${id}_${secret}`)).toEqual({ botId: id, tokenPrefix: secret.slice(0, 6) });
      }),
    );
  });

  it.each([
    ['an uppercase bot id', `svc_bot_${ID.toUpperCase()}_${SECRET}`, 'lowercase hexadecimal'],
    ['a secret of 42 characters', `svc_bot_${ID}_${SECRET.slice(1)}`, 'exactly 43 characters (it has 42)'],
    ['a secret of 44 characters', `${TOKEN}x`, 'exactly 43 characters (it has 44)'],
    ['a trailing newline', `${TOKEN}\n`, 'whitespace'],
    ['a character outside base64url', `svc_bot_${ID}_${SECRET.slice(1)}=`, 'only letters, digits'],
    ['another prefix', `svc_oa_${SECRET}`, 'starts with svc_bot_'],
    ['a bot id that is not a UUID', `svc_bot_0b7e6a52-3f0e-4c8e-9d51_${SECRET}`, 'the bot id, a UUID'],
    ['a missing separator', `svc_bot_${ID}-${SECRET}`, 'followed by "_"'],
    ['a leading space', ` ${TOKEN}`, 'starts with svc_bot_'],
  ])('refuses %s, without quoting the token', (_case, value, problem) => {
    expect(isBotToken(value)).toBe(false);
    expect(parseBotToken(value)).toBeUndefined();
    expect(botTokenProblem(value)).toContain(problem);
    expect(botTokenProblem(value)).not.toContain(SECRET.slice(0, 10));
  });

  it('refuses anything after the secret part, even a newline a regex $ might allow', () => {
    fc.assert(fc.property(fc.string({ minLength: 1 }), (tail) => expect(isBotToken(`${TOKEN}${tail}`)).toBe(false)));
  });

  it('treats OAuth tokens as opaque: they are never parsed as bot tokens', () => {
    for (const prefix of ['svc_os_', 'svc_oc_', 'svc_oa_', 'svc_or_', 'svc_client_']) expect(parseBotToken(`${prefix}${SECRET}`)).toBeUndefined();
  });
});
