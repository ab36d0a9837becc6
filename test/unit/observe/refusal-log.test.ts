import pino from 'pino';
import { SvcWebhookError, type ErrorCode } from '../../../src/errors';
import { noteClaimedBoard } from '../../../src/internal/logging/claimed-board-note';
import { REFUSAL_LOG_INTERVAL_MS, RefusalLog, isExpectedRefusal } from '../../../src/observe/refusal-log';
import type { RequestFacts } from '../../../src/internal/request/request-access';

function logOf() {
  const chunks: string[] = [];
  let now = 1_000_000;
  const log = new RefusalLog(pino({ level: 'info' }, { write: (s: string) => void chunks.push(s) }), () => now);
  return {
    log,
    lines: (): Array<Record<string, any>> => chunks.map((c) => JSON.parse(c)),
    advance(ms: number) {
      now += ms;
    },
  };
}

const error = (code: ErrorCode) => new SvcWebhookError(code, `refused: ${code}`);
const req = (headers: Record<string, string> = {}, remoteAddress?: string): RequestFacts => ({
  headers,
  ...(remoteAddress === undefined ? {} : { socket: { remoteAddress } }),
});

describe("refusals that are the sender's doing", () => {
  it.each<[ErrorCode, boolean]>([
    ['schema_violation', true],
    ['signature_mismatch', true],
    ['body_timeout', true],
    ['delivery_in_progress', true],
    ['body_too_large', true],
    ['unsupported_media_type', true],
    ['handler_failed', false],
    ['store_unavailable', false],
    ['body_already_consumed', false],
  ])('%s: expected %p', (code, expected) => {
    expect(isExpectedRefusal(error(code))).toBe(expected);
  });
});

describe('the refusal log', () => {
  it('logs a refusal at warn: the fields given, status, code, reason and what the request claimed, unverified', () => {
    const { log, lines } = logOf();
    const request = req({ 'x-svc-delivery': 'd-1', 'x-svc-event': 'task.created' }, '203.0.113.9');
    noteClaimedBoard(request, 'b-1');
    log.refused(error('signature_mismatch'), request, { outcome: 'rejected', durationMs: 1 });
    expect(lines()).toEqual([
      expect.objectContaining({
        level: 40,
        outcome: 'rejected',
        durationMs: 1,
        status: 401,
        code: 'signature_mismatch',
        reason: 'refused: signature_mismatch',
        unverified: { deliveryId: 'd-1', event: 'task.created', boardId: 'b-1' },
        peer: '203.0.113.9',
      }),
    ]);
    expect(lines()[0]).not.toHaveProperty('repeated');
  });

  it('shows no claim a request did not make, nor one it made twice, nor a board noted as none', () => {
    const { log, lines } = logOf();
    const request: RequestFacts = { headers: {}, rawHeaders: ['X-Svc-Delivery', 'a', 'X-Svc-Delivery', 'b'] };
    noteClaimedBoard(request, undefined);
    log.refused(error('signature_mismatch'), request, {});
    expect(lines()[0]!.unverified).toEqual({});
    expect(lines()[0]).not.toHaveProperty('peer');
  });

  it('keeps a board noted earlier when a later step notes none', () => {
    const { log, lines } = logOf();
    const request = req();
    noteClaimedBoard(request, 'b-1');
    noteClaimedBoard(request, undefined);
    log.refused(error('signature_mismatch'), request, {});
    expect(lines()[0]!.unverified).toEqual({ boardId: 'b-1' });
  });

  it('shows a claim without control characters, cut after 100 characters', () => {
    const { log, lines, advance } = logOf();
    log.refused(error('signature_mismatch'), req({ 'x-svc-delivery': `\u0000 ~a\u0001b\u001fc\u007fd\u009fe\u00a0f`, 'x-svc-event': 'e'.repeat(100) }), {});
    advance(REFUSAL_LOG_INTERVAL_MS);
    log.refused(error('signature_mismatch'), req({ 'x-svc-delivery': 'x'.repeat(101) }), {});
    expect(lines()[0]!.unverified).toEqual({ deliveryId: '? ~a?b?c?d?e\u00a0f', event: 'e'.repeat(100) });
    expect(lines()[1]!.unverified).toEqual({ deliveryId: `${'x'.repeat(100)}…` });
  });

  it('logs one line per code per interval, and counts the rest on the next line', () => {
    const { log, lines, advance } = logOf();
    log.refused(error('signature_mismatch'), req(), {});
    advance(1);
    log.refused(error('signature_mismatch'), req(), {});
    log.refused(error('schema_violation'), req(), {});
    advance(REFUSAL_LOG_INTERVAL_MS - 2);
    log.refused(error('signature_mismatch'), req(), {});
    expect(lines().map((l) => [l.code, l.repeated])).toEqual([
      ['signature_mismatch', undefined],
      ['schema_violation', undefined],
    ]);
    advance(1);
    log.refused(error('signature_mismatch'), req(), {});
    expect(lines()[2]).toMatchObject({ code: 'signature_mismatch', repeated: 2 });
    advance(REFUSAL_LOG_INTERVAL_MS);
    log.refused(error('signature_mismatch'), req(), {});
    expect(lines()[3]).not.toHaveProperty('repeated');
  });
});
