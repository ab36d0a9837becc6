import { REDACTED, redactingLogOptions } from '../../src/internal/log-redaction';

const SECRET = 'board-secret-0123456789abcdef';
const { formatters } = redactingLogOptions([SECRET]);
const line = (fields: object) => formatters.log(fields) as Record<string, unknown>;

class UpstreamError extends Error {}
UpstreamError.prototype.name = 'UpstreamError';

/** An error with fields of its own, as libraries throw them. */
function failure(message: string, fields: Record<string, unknown>, cause?: unknown): Error {
  const err = new UpstreamError(message, cause === undefined ? undefined : { cause });
  return Object.assign(err, fields);
}

describe('an error logged under a key of its own (not `err`)', () => {
  it('becomes its type, message, stack and own fields, each scrubbed', () => {
    const err = failure(`rejected with ${SECRET}`, { status: 401, Token: 'abc', detail: { secret: 'x', note: `key ${SECRET}` } });
    const logged = line({ failure: err }).failure as Record<string, unknown>;
    expect(logged).toEqual({
      type: 'UpstreamError',
      message: `rejected with ${REDACTED}`,
      stack: expect.any(String),
      status: 401,
      Token: REDACTED,
      detail: { secret: REDACTED, note: `key ${REDACTED}` },
    });
    expect(logged.stack).not.toContain(SECRET);
    expect(logged.stack).toContain('UpstreamError');
  });

  it('has no stack when the error has none that is a string', () => {
    const err = new Error('no stack');
    Object.defineProperty(err, 'stack', { value: undefined });
    expect(line({ failure: err }).failure).toEqual({ type: 'Error', message: 'no stack' });
  });

  it('keeps its cause, scrubbed like the error itself, once', () => {
    const cause = failure(`inner ${SECRET}`, { password: 'p' });
    const logged = line({ failure: failure('outer', {}, cause) }).failure as Record<string, unknown>;
    expect(Object.keys(logged).sort()).toEqual(['cause', 'message', 'stack', 'type']);
    expect(logged.cause).toEqual({ type: 'UpstreamError', message: `inner ${REDACTED}`, stack: expect.any(String), password: REDACTED });
  });

  it('stops at a bounded depth on an error that holds itself', () => {
    const err = failure('loop', {});
    Object.assign(err, { again: { err } });
    let logged = line({ failure: err }).failure as Record<string, unknown>;
    let steps = 0;
    // Each level copies the error; past the depth limit the error itself is left in place.
    while (!(logged instanceof Error)) {
      logged = (logged.again as { err: Record<string, unknown> }).err;
      steps++;
    }
    expect(logged).toBe(err);
    expect(steps).toBeLessThanOrEqual(6);
  });

  it('is replaced by a plain note when reading it throws', () => {
    const err = new Error('unreadable');
    Object.defineProperty(err, 'name', {
      get() {
        throw new Error('a getter that throws');
      },
    });
    expect(line({ failure: err }).failure).toEqual({ type: 'Error', message: 'the error could not be read' });
  });
});
