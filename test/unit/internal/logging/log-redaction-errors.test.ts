import { REDACTED, redactingLogOptions, scrubbedError } from '../../../../src/internal/logging/log-redaction';

const SECRET = 'board-secret-0123456789abcdef';
const { formatters } = redactingLogOptions([SECRET]);
const line = (fields: object) => formatters.log(fields) as Record<string, unknown>;

describe('scrubbedError: an error that leaves another way than the logger (a dead letter), scrubbed', () => {
  it('drops the secret from its message and its stack, and is the same error', () => {
    const err = new TypeError(`rejected with ${SECRET}`);
    const scrubbed = scrubbedError(err, [SECRET]);
    expect(scrubbed).toBe(err);
    expect(scrubbed.message).toBe(`rejected with ${REDACTED}`);
    expect(scrubbed.stack).toContain(`TypeError: rejected with ${REDACTED}`);
    expect(scrubbed.stack).not.toContain(SECRET);
  });

  it('scrubs the message of an error without a stack, and gives it none', () => {
    const err = new Error(`rejected with ${SECRET}`);
    Object.defineProperty(err, 'stack', { value: undefined, configurable: true, writable: true });
    const scrubbed = scrubbedError(err, [SECRET]);
    expect([scrubbed.message, scrubbed.stack]).toEqual([`rejected with ${REDACTED}`, undefined]);
  });

  it('leaves its stack an ordinary one: it can be set again and deleted', () => {
    const scrubbed: { stack?: string } = scrubbedError(new Error(`rejected with ${SECRET}`), [SECRET]);
    scrubbed.stack = 'replaced';
    expect(scrubbed.stack).toBe('replaced');
    delete scrubbed.stack;
    expect(Object.hasOwn(scrubbed, 'stack')).toBe(false);
  });
});

describe('an error logged under a key of its own: its cause', () => {
  it("comes after the error's own fields, wherever it was set among them", () => {
    const err = Object.assign(new Error('x'), { cause: { token: 't' }, detail: 'd' });
    expect(Object.keys(err)).toEqual(['cause', 'detail']);
    const logged = line({ failure: err }).failure as Record<string, unknown>;
    expect(Object.keys(logged)).toEqual(['type', 'message', 'stack', 'detail', 'cause']);
    expect(logged.cause).toEqual({ token: REDACTED });
  });
});
