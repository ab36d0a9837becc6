import { NO_SECRETS, REDACTED, childDropping, lineScrub } from '../../../../src/internal/logging/log-redaction';
import { GuardedLogger, SinkLogger, type LineScrub, type WebhookLogger } from '../../../../src/internal/logging/logger';

const BOARD_SECRET = 'the-verifying-board-secret-0123';
const FIXED_SECRET = 'the-webhook-fixed-secret-456789';
const KEEP: LineScrub = { fields: (f) => f, message: (m) => m };

describe("childDropping: a handler's logger (ctx.log) over a console-like logger", () => {
  it("drops the verifying board's secrets as well as those its parent drops, from the fields and the message", () => {
    const sink = jest.fn();
    const parent = new SinkLogger(sink, lineScrub([FIXED_SECRET]), { webhook: 'board' });
    const log = childDropping(parent, { deliveryId: 'd' }, [BOARD_SECRET]);
    log.warn({ detail: `got ${BOARD_SECRET} and ${FIXED_SECRET}` }, `quoted ${BOARD_SECRET} and ${FIXED_SECRET}`);
    expect(sink).toHaveBeenCalledWith(
      'warn',
      { webhook: 'board', deliveryId: 'd', detail: `got ${REDACTED} and ${REDACTED}` },
      `quoted ${REDACTED} and ${REDACTED}`,
    );
  });

  it('adds no scrub of its own when there are no secrets to drop: the parent scrubs each line as it does its own', () => {
    const sink = jest.fn();
    const log = childDropping(new SinkLogger(sink, KEEP), { deliveryId: 'd' }, NO_SECRETS);
    log.info({ token: 'kept by a parent that keeps it' }, 'm');
    expect(sink).toHaveBeenCalledWith('info', { deliveryId: 'd', token: 'kept by a parent that keeps it' }, 'm');
  });
});

describe('childDropping behind the guard around a user’s logger', () => {
  it('gives a guarded child that drops the secrets', () => {
    const sink = jest.fn();
    const log = childDropping(new GuardedLogger(new SinkLogger(sink, KEEP)), { deliveryId: 'd' }, [BOARD_SECRET]);
    expect(log).toBeInstanceOf(GuardedLogger);
    log.error({ detail: BOARD_SECRET }, 'failed');
    expect(sink).toHaveBeenCalledWith('error', { deliveryId: 'd', detail: REDACTED }, 'failed');
  });

  it('gives the guarded logger itself, never an unscrubbed child, when its logger cannot make the scrubbing child', () => {
    const lines: unknown[][] = [];
    // A pino-shaped logger that refuses child options (those that would drop the secrets).
    const inner: WebhookLogger & { child: jest.Mock } = {
      debug: (...args: unknown[]) => void lines.push(args),
      info: (...args: unknown[]) => void lines.push(args),
      warn: (...args: unknown[]) => void lines.push(args),
      error: (...args: unknown[]) => void lines.push(args),
      child: jest.fn((_bindings: object, options?: object) => {
        if (options !== undefined) throw new TypeError('child options are not supported');
        return inner;
      }),
    };
    const guarded = new GuardedLogger(inner);
    expect(childDropping(guarded, { deliveryId: 'd' }, [BOARD_SECRET])).toBe(guarded);
  });
});
