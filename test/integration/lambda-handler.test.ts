import pino from 'pino';
import {
  createLambdaHandler,
  svcBoardWebhook,
  svcBotWebhook,
  type AlbResult,
  type DeliveryRecord,
  type LambdaHttpEvent,
  type LambdaHttpResult,
} from '../../src';
import { statusLine } from '../../src/adapters/lambda/lambda-handler';
import { boardEvent, botCommand, signBoardEvent, signBotUpdate, silentLogger } from '../../src/testing';
import { EVENT_SHAPES, lambdaEvent, type EventShape } from '../support/lambda-events';

const secret = 'lambda-secret-0123456789abcdef';
const forger = 'forged-secret-0123456789abcdef';

/** A board webhook as a Lambda handler, with what it ran, recorded and logged. */
function lambda(options: { maxBodyBytes?: number } = {}) {
  const runs: string[] = [];
  const records: DeliveryRecord[] = [];
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  const webhook = svcBoardWebhook({ secret, logger, ...options })
    .onAny((event) => void runs.push(event.id))
    .onDelivery((record) => void records.push(record));
  return { handler: createLambdaHandler(webhook), runs, records, lines };
}

const codeOf = (result: { body: string }) => (JSON.parse(result.body) as { code?: string }).code;

/** The status and answer of a result, read alike whatever its shape. */
function answer(result: LambdaHttpResult): [number, unknown] {
  return [result.statusCode, JSON.parse(result.body)];
}

const SHAPE_NAMES: Record<EventShape, string> = {
  rest: 'an API Gateway REST API event (payload 1.0)',
  http: 'an HTTP API event (payload 2.0)',
  url: 'a Function URL event',
  alb: 'an ALB event',
  'alb-multi': 'an ALB event with multi-value headers',
};

describe('createLambdaHandler(webhook)', () => {
  describe.each(EVENT_SHAPES)('given %s', (shape) => {
    describe.each([
      ['a plain body', false],
      ['a base64 body', true],
    ])(`(${SHAPE_NAMES[shape]}) with %s`, (_name, base64) => {
      it('handles a signed delivery once and answers 200 in the shape the caller reads', async () => {
        const { handler, runs } = lambda();
        const event = boardEvent('task.created', { task: { title: 'Jürgen’s 漢字 🚀' } });
        const result = await handler(lambdaEvent(shape, signBoardEvent(event, { secret }), { base64 }));
        expect(answer(result)).toEqual([200, { ok: true }]);
        expect(result.isBase64Encoded).toBe(false);
        expect(runs).toEqual([event.id]);
        if (shape === 'alb' || shape === 'alb-multi') {
          const alb = result as AlbResult;
          expect(alb.statusDescription).toBe('200 OK');
          // A target group with multi-value headers reads only multiValueHeaders.
          if (shape === 'alb-multi') expect([alb.multiValueHeaders?.['Content-Type'], alb.headers]).toEqual([['application/json; charset=utf-8'], undefined]);
          else expect([alb.headers?.['Content-Type'], alb.multiValueHeaders]).toEqual(['application/json; charset=utf-8', undefined]);
        } else {
          expect((result as { headers: Record<string, string> }).headers['Content-Type']).toBe('application/json; charset=utf-8');
          expect('statusDescription' in result).toBe(false);
        }
      });

      it('answers its repeat as a duplicate, and runs nothing again', async () => {
        const { handler, runs } = lambda();
        const signed = signBoardEvent(boardEvent('task.created'), { secret });
        await handler(lambdaEvent(shape, signed, { base64 }));
        expect(answer(await handler(lambdaEvent(shape, signed, { base64 })))).toEqual([200, { ok: true, duplicate: true }]);
        expect(runs).toHaveLength(1);
      });

      it('refuses a forged delivery with 401 signature_mismatch and runs nothing', async () => {
        const { handler, runs } = lambda();
        const result = await handler(lambdaEvent(shape, signBoardEvent(boardEvent('task.created'), { secret: forger }), { base64 }));
        expect([result.statusCode, codeOf(result), runs]).toEqual([401, 'signature_mismatch', []]);
      });

      it('refuses a body over maxBodyBytes with 413 body_too_large', async () => {
        const { handler, runs } = lambda({ maxBodyBytes: 256 * 1024 });
        const signed = signBoardEvent(boardEvent('task.created', { task: { description: 'x'.repeat(300 * 1024) } }), { secret });
        const result = await handler(lambdaEvent(shape, signed, { base64 }));
        expect([result.statusCode, codeOf(result), runs]).toEqual([413, 'body_too_large', []]);
      });
    });

    it('verifies the bytes that were sent, not the text of the event: one byte more is refused', async () => {
      const { handler } = lambda();
      const signed = signBoardEvent(boardEvent('task.created'), { secret });
      const result = await handler(lambdaEvent(shape, { ...signed, body: `${signed.body}\n` }, { base64: true }));
      expect([result.statusCode, codeOf(result)]).toEqual([401, 'signature_mismatch']);
    });

    it('answers another method 405', async () => {
      const { handler } = lambda();
      const result = await handler(lambdaEvent(shape, signBoardEvent(boardEvent('ping'), { secret }), { method: 'GET' }));
      expect([result.statusCode, codeOf(result)]).toEqual([405, 'method_not_allowed']);
      if (shape === 'alb' || shape === 'alb-multi') expect((result as AlbResult).statusDescription).toBe('405 Method Not Allowed');
    });
  });

  describe('given a signature header sent twice', () => {
    const twice = (shape: EventShape) => {
      const signed = signBoardEvent(boardEvent('task.created'), { secret });
      const headers = Object.fromEntries(Object.entries(signed.headers).map(([name, value]) => [name, name === 'X-Svc-Signature' ? [value, value] : [value]]));
      return lambdaEvent(shape, signed, { headers });
    };

    it.each(['rest', 'alb-multi'] as const)('refuses it in multiValueHeaders (%s) with 401 signature_duplicated, though `headers` holds one', async (shape) => {
      const { handler, runs } = lambda();
      const result = await handler(twice(shape));
      expect([result.statusCode, codeOf(result), runs]).toEqual([401, 'signature_duplicated', []]);
    });

    it.each(['http', 'url'] as const)('refuses it joined with a comma by payload 2.0 (%s) with 401 signature_duplicated', async (shape) => {
      const { handler, runs } = lambda();
      const result = await handler(twice(shape));
      expect([result.statusCode, codeOf(result), runs]).toEqual([401, 'signature_duplicated', []]);
    });
  });

  describe('given an event that is no HTTP request it knows', () => {
    const signed = () => signBoardEvent(boardEvent('task.created'), { secret });
    const rest = () => lambdaEvent('rest', signed()) as unknown as Record<string, unknown>;
    const cases: Array<[string, () => unknown, RegExp]> = [
      ['a queue event (SQS)', () => ({ Records: [{ messageId: 'm-1', body: signed().body, eventSource: 'aws:sqs' }] }), /^an event with the fields Records$/],
      [
        'a schedule (EventBridge)',
        () => ({ version: '0', id: 'e-1', 'detail-type': 'Scheduled Event', source: 'aws.events', detail: {} }),
        /^an event with the fields version, id, detail-type, source, detail$/,
      ],
      ['null', () => null, /^null$/],
      ['a string', () => signed().body, /^a string$/],
      [
        'a REST event whose body was parsed into an object',
        () => ({ ...rest(), body: JSON.parse(signed().body) as unknown }),
        /^an API Gateway REST API event \(payload 1\.0\) whose body is an object/,
      ],
      ['a REST event without isBase64Encoded', () => ({ ...rest(), isBase64Encoded: undefined }), /whose isBase64Encoded is missing$/],
      [
        'a payload 2.0 event without its method',
        () => ({ ...(lambdaEvent('http', signed()) as object), requestContext: { http: {} } }),
        /^an HTTP API or Function URL event \(payload 2\.0\) whose method is missing$/,
      ],
      [
        'an ALB event whose base64 body is not base64',
        () => ({ ...(lambdaEvent('alb', signed()) as object), isBase64Encoded: true }),
        /^an ALB event whose body is not base64/,
      ],
      ['an event of a payload version it does not know', () => ({ ...rest(), version: '3.0' }), /^an event with the fields /],
      [
        'a payload 2.0 event with a header that is no text',
        () => ({ ...(lambdaEvent('http', signed()) as { headers: object }), headers: { 'x-svc-signature': ['v1=00'] } }),
        /^an HTTP API or Function URL event \(payload 2\.0\) whose headers are no HTTP headers$/,
      ],
      [
        'a payload 2.0 event with a header name no request can carry',
        () => ({ ...(lambdaEvent('url', signed()) as { headers: object }), headers: { 'bad name': 'x' } }),
        /whose headers are no HTTP headers$/,
      ],
      [
        'a REST event whose headers are a list',
        () => ({ ...rest(), headers: ['X-Svc-Signature'], multiValueHeaders: null }),
        /whose headers are no HTTP headers$/,
      ],
    ];

    it.each(cases)('answers %s 500 unsupported_event, verifies nothing, and logs one error naming its shape', async (_name, make, shape) => {
      const { handler, runs, records, lines } = lambda();
      const result = await handler(make() as LambdaHttpEvent);
      expect([result.statusCode, codeOf(result), result.isBase64Encoded]).toEqual([500, 'unsupported_event', false]);
      // Not a refused delivery: the pipeline never saw it, so no record and no delivery line.
      expect([runs, records]).toEqual([[], []]);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: 50, code: 'unsupported_event', webhook: 'board' });
      expect(lines[0]!.shape).toMatch(shape);
      // Names, never values: no body, no signature.
      expect(JSON.stringify(lines[0])).not.toMatch(/v1=|task\.created/);
    });

    it('still answers 500 unsupported_event when the logger throws', async () => {
      const throwing = {
        info: () => undefined,
        warn: () => undefined,
        error: () => {
          throw new Error('log sink down');
        },
      };
      const handler = createLambdaHandler(svcBoardWebhook({ secret, logger: throwing }));
      const result = await handler({ Records: [] } as unknown as LambdaHttpEvent);
      expect([result.statusCode, codeOf(result)]).toEqual([500, 'unsupported_event']);
    });

    it('says how many more fields there were than it names', async () => {
      const { handler, lines } = lambda();
      await handler(Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`f${i}`, i])) as unknown as LambdaHttpEvent);
      expect(lines[0]!.shape).toBe('an event with the fields f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11 and 3 more');
    });
  });

  describe('the request it hands the pipeline', () => {
    it('is on the event’s path: a bot webhook whose path names the bot reads it (payload 1.0 and 2.0)', async () => {
      const botId = '0f8fad5b-d9cb-469f-a165-70867728950e';
      const botSecret = 'bot-secret-0123456789abcdef';
      const commands: string[] = [];
      const bot = svcBotWebhook({ logger: silentLogger, path: '/bots/:botId', secret: ({ botId: id }) => (id === botId ? botSecret : undefined) }).command(
        'deploy',
        (data) => void commands.push(data.message.command!.name),
      );
      const handler = createLambdaHandler(bot);
      for (const shape of ['rest', 'http'] as const) {
        const signed = signBotUpdate(botCommand('deploy', '', undefined, { botUserId: botId }), { secret: botSecret });
        expect((await handler(lambdaEvent(shape, signed, { path: `/bots/${botId}` }))).statusCode).toBe(200);
      }
      expect(commands).toEqual(['deploy', 'deploy']);
    });

    it('gives handlers ctx.request with the event’s headers, and a payload 2.0 event’s cookies as its Cookie header', async () => {
      const seen: Array<string | null | undefined> = [];
      const webhook = svcBoardWebhook({ secret, logger: silentLogger }).onAny(
        (_event, ctx) => void seen.push(ctx.request?.headers.get('user-agent'), ctx.request?.headers.get('cookie')),
      );
      await createLambdaHandler(webhook)(lambdaEvent('url', signBoardEvent(boardEvent('task.created'), { secret })));
      expect(seen).toEqual(['svc-webhooks-test', 'session=abc']);
    });

    it('treats a REST event without a body or headers (null) as an empty request, refused as unsigned', async () => {
      const { handler } = lambda();
      const event = { ...(lambdaEvent('rest', signBoardEvent(boardEvent('ping'), { secret })) as object), body: null, headers: null, multiValueHeaders: null };
      const result = await handler(event as LambdaHttpEvent);
      expect([result.statusCode, codeOf(result)]).toEqual([415, 'unsupported_media_type']);
    });
  });

  it('takes only a webhook made by svcBoardWebhook or svcBotWebhook', () => {
    expect(() => createLambdaHandler((() => undefined) as never)).toThrow(TypeError);
  });

  it('gives an ALB a status line for every status a webhook answers with', () => {
    expect([200, 400, 401, 404, 405, 408, 409, 413, 415, 500, 503].map(statusLine)).toEqual([
      '200 OK',
      '400 Bad Request',
      '401 Unauthorized',
      '404 Not Found',
      '405 Method Not Allowed',
      '408 Request Timeout',
      '409 Conflict',
      '413 Content Too Large',
      '415 Unsupported Media Type',
      '500 Internal Server Error',
      '503 Service Unavailable',
    ]);
    expect(statusLine(418)).toBe('418');
  });
});
