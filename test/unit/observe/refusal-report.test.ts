import pino from 'pino';
import { SvcWebhookError, type ErrorCode } from '../../../src/errors';
import type { DeliveryRecord } from '../../../src/internal/delivery/delivery-record';
import { DeliveryReport, type Answered } from '../../../src/observe/delivery-report';

const delivery = { id: '0f8fad5b-d9cb-469f-a165-70867728950e', kind: 'task.updated', payload: { type: 'task.updated' } };

function reportWith() {
  const records: DeliveryRecord[] = [];
  const logger = pino({ level: 'silent' });
  const report = new DeliveryReport({
    webhook: 'board',
    logger,
    lineLogger: logger,
    listeners: [(r) => void records.push(r)],
    errorHandlers: [],
    now: () => 0,
  });
  return { report, records };
}

function refused(error: SvcWebhookError): Answered {
  return {
    state: 'rejected',
    error,
    delivery,
    durationMs: 3,
    receivedAt: 7,
    inbox: false,
    trace: undefined,
    verifierSecrets: [],
    request: { facts: { headers: {} }, source: undefined, access: undefined as never },
  };
}

const listenersRan = () => new Promise((r) => setImmediate(r));

describe('the report of a refusal that is neither expected nor a failure here (status below 500)', () => {
  it('writes one warn line with the status, the code and the error by type and code', () => {
    // The fields as the report gives them, before a serializer rewrites `err`.
    const logger = { debug: jest.fn(), info: jest.fn(), warn: jest.fn(), error: jest.fn() };
    const report = new DeliveryReport({
      webhook: 'board',
      logger: logger as never,
      lineLogger: logger as never,
      listeners: [],
      errorHandlers: [],
      now: () => 0,
    });
    report.answered(refused(new SvcWebhookError('not_parked', 'no such parked delivery')));
    expect(logger.error).not.toHaveBeenCalled();
    expect(logger.warn.mock.calls.map((call: unknown[]) => call[0])).toEqual([
      expect.objectContaining({
        deliveryId: delivery.id,
        kind: 'task.updated',
        outcome: 'rejected',
        durationMs: 3,
        status: 404,
        code: 'not_parked',
        err: expect.objectContaining({ type: 'SvcWebhookError', code: 'not_parked' }),
      }),
    ]);
  });
});

describe('the delivery record of a refusal', () => {
  it("lists a schema violation's problems", async () => {
    const { report, records } = reportWith();
    const problems = [{ path: '/task', message: 'must be object' }];
    report.answered(refused(new SvcWebhookError('schema_violation', 'payload does not match the schema', { details: problems })));
    await listenersRan();
    expect(records).toEqual([expect.objectContaining({ outcome: 'rejected', status: 400, code: 'schema_violation', problems })]);
  });

  it.each<[string, ErrorCode, unknown]>([
    ['a schema violation with no problems listed (a malformed event)', 'schema_violation', []],
    ['a schema violation whose details are no list', 'schema_violation', { path: '/task' }],
    ['another refusal that carries a list as details', 'signature_mismatch', [{ path: '/task', message: 'must be object' }]],
    ['another refusal without details', 'signature_mismatch', undefined],
  ])('has no problems for %s', async (_what, code, details) => {
    const { report, records } = reportWith();
    report.answered(refused(new SvcWebhookError(code, 'refused', { details })));
    await listenersRan();
    expect(records).toEqual([expect.objectContaining({ outcome: 'rejected', code })]);
    expect('problems' in records[0]!).toBe(false);
  });
});
