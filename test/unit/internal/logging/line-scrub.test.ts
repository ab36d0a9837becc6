import { NO_SECRETS, lineScrub } from '../../../../src/internal/logging/log-redaction';

const SECRET = 'board-secret-0123456789abcdef';

describe('lineScrub: the scrub of a line for a console, winston or bunyan logger', () => {
  it('drops symbol-keyed fields, which pino never writes and console would, and keeps the others', () => {
    const logged = lineScrub(NO_SECRETS).fields({ deliveryId: 'd', [Symbol('internal')]: 'shown by console', attempt: 2 });
    expect(logged).toStrictEqual({ deliveryId: 'd', attempt: 2 });
    expect(Object.getOwnPropertySymbols(logged)).toEqual([]);
  });

  it('leaves fields with nothing to drop as they are, nested objects included', () => {
    const nested = { note: 'kept' };
    const fields = { deliveryId: 'd', nested };
    const logged = lineScrub([SECRET]).fields(fields);
    expect(logged).toBe(fields);
    expect(logged.nested).toBe(nested);
  });
});
