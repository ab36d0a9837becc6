import fc from 'fast-check';
import pino from 'pino';
import { redactSecrets, redactingStream } from '../../../../src/internal/logging/redact-secrets';

const ID = '0b7e6a52-3f0e-4c8e-9d51-2f8a1c3b4d5e';
const SECRET = 'abc123XYZ_-0123456789abcdefghijklmnopqrstuv';
const base64url = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-'.split(''));

describe('redactSecrets', () => {
  it('keeps the bot id and the tokenPrefix of a bot token, never the rest', () => {
    expect(redactSecrets(`Authorization: Bearer svc_bot_${ID}_${SECRET}`)).toBe(`Authorization: Bearer svc_bot_${ID}_abc123…[redacted]`);
  });

  it.each(['os', 'oc', 'oa', 'or', 'client'])('redacts svc_%s_ secrets', (kind) => {
    expect(redactSecrets(`token=svc_${kind}_${SECRET}&x=1`)).toBe(`token=svc_${kind}_abc123…[redacted]&x=1`);
  });

  it('redacts every token in a line, inside JSON too', () => {
    const line = JSON.stringify({ a: `svc_oa_${SECRET}`, b: [`svc_bot_${ID}_${SECRET}`] });
    const out = redactSecrets(line);
    expect(out).not.toContain(SECRET.slice(6));
    expect(out.match(/…\[redacted\]/g)).toHaveLength(2);
    expect(() => JSON.parse(out)).not.toThrow();
  });

  it("keeps a bot id only in a bot token: another kind's secret that starts like one keeps only its prefix", () => {
    expect(redactSecrets(`svc_oa_${ID}_${SECRET}`)).toBe(`svc_oa_${ID.slice(0, 6)}…[redacted]`);
  });

  it('keeps nothing of a secret-looking tail shorter than a full secret', () => {
    expect(redactSecrets('svc_os_partialpartial12')).toBe('svc_os_…[redacted]');
  });

  it('leaves names like svc_client_id and plain prose alone', () => {
    const text = 'set svc_client_id and the svc_bot_ prefix; svc_other_thing is fine';
    expect(redactSecrets(text)).toBe(text);
  });

  it('never lets more than the 6-character prefix of any token through', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('bot', 'os', 'oc', 'oa', 'or', 'client'),
        fc.uuid(),
        fc.array(base64url, { minLength: 43, maxLength: 43 }),
        fc.string(),
        fc.string(),
        (kind, id, chars, before, after) => {
          const secret = chars.join('');
          const token = kind === 'bot' ? `svc_bot_${id}_${secret}` : `svc_${kind}_${secret}`;
          const out = redactSecrets(`${before} ${token} ${after}`);
          expect(out).not.toContain(secret.slice(6));
          expect(out).toContain(`${secret.slice(0, 6)}…[redacted]`);
        },
      ),
    );
  });

  it('is idempotent: redacting twice changes nothing', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('bot', 'oa', 'client'),
        fc.uuid(),
        fc.array(base64url, { minLength: 16, maxLength: 60 }),
        fc.string(),
        (kind, id, chars, around) => {
          const token = kind === 'bot' ? `svc_bot_${id}_${chars.join('')}` : `svc_${kind}_${chars.join('')}`;
          const once = redactSecrets(`${around}${token}${around}`);
          expect(redactSecrets(once)).toBe(once);
        },
      ),
    );
  });

  it('still cuts a full secret that happens to be followed by the marker', () => {
    expect(redactSecrets(`svc_bot_${ID}_${SECRET}…[redacted]`)).toBe(`svc_bot_${ID}_abc123…[redacted]…[redacted]`);
  });

  it('redacts pino output written through redactingStream', () => {
    const lines: string[] = [];
    const logger = pino({}, redactingStream({ write: (line: string) => lines.push(line) }));
    logger.info({ header: `Bearer svc_bot_${ID}_${SECRET}` }, `called with svc_oa_${SECRET}`);
    expect(lines.join('')).not.toContain(SECRET.slice(6));
    expect(JSON.parse(lines[0]!)).toMatchObject({ header: `Bearer svc_bot_${ID}_abc123…[redacted]`, msg: 'called with svc_oa_abc123…[redacted]' });
  });
});
