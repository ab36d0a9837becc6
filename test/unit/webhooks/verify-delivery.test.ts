import { createHmac, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SvcWebhookError, verifyBoardDelivery, verifyBotDelivery, type BoardUnknownEvent, type ErrorCode, type VerifiedBoardDelivery } from '../../../src';
import { boardEvent, botSignature, botUpdate, signBoardEvent, signBotUpdate } from '../../../src/testing';

const secret = 'standalone-secret-0123456789';

async function refusal(verify: () => Promise<unknown>): Promise<{ code: ErrorCode; status: number }> {
  try {
    await verify();
  } catch (err) {
    expect(err).toBeInstanceOf(SvcWebhookError);
    return { code: (err as SvcWebhookError).code, status: (err as SvcWebhookError).status };
  }
  throw new Error('verification passed; a refusal was expected');
}

/** Headers of a signed board event with `change` applied (undefined deletes a header). */
function boardInput(event: object | string, change: Record<string, string | undefined> = {}, options: { secret?: string; timestamp?: number } = {}) {
  const signed = signBoardEvent(event, { secret: options.secret ?? secret, ...(options.timestamp === undefined ? {} : { timestamp: options.timestamp }) });
  const headers: Record<string, string> = { ...signed.headers };
  for (const [name, value] of Object.entries(change)) {
    if (value === undefined) delete headers[name];
    else headers[name] = value;
  }
  return { body: signed.body, headers, secret };
}

describe('verifyBoardDelivery', () => {
  it('returns the typed event with its delivery id, timestamp and sequence', async () => {
    const event = boardEvent('task.created', { task: { title: 'Ship it' } });
    const verified = await verifyBoardDelivery(boardInput(event));
    expect(verified).toMatchObject({ deliveryId: event.id, known: true, type: 'task.created', sequence: event.sequence });
    expect(verified.timestamp).toBeGreaterThan(0);
    if (verified.known && verified.type === 'task.created') expect(verified.event.task.title).toBe('Ship it');
    else throw new Error('not narrowed to task.created');
  });

  it('narrows the event by type (a compile-time check)', async () => {
    const narrow = (d: VerifiedBoardDelivery): string | undefined => {
      if (!d.known) {
        // @ts-expect-error an unknown type has no typed task
        return d.event.task.title;
      }
      if (d.type === 'task.moved_out') {
        // @ts-expect-error a moved-out task has no title
        return d.event.task.title;
      }
      return d.type === 'task.created' ? d.event.task.title : undefined;
    };
    expect(narrow(await verifyBoardDelivery(boardInput(boardEvent('task.created', { task: { title: 'T' } }))))).toBe('T');
  });

  it('a type this version does not know is verified, with known: false and its event typed as the exported BoardUnknownEvent', async () => {
    const event = { ...boardEvent('ping'), type: 'board.renamed' };
    const verified = await verifyBoardDelivery(boardInput(event));
    expect(verified).toMatchObject({ known: false, type: 'board.renamed', deliveryId: event.id });
    if (!verified.known) {
      const unknown: BoardUnknownEvent = verified.event;
      expect(unknown.type).toBe('board.renamed');
    }
  });

  describe('takes the body as', () => {
    const event = boardEvent('ping');
    const input = boardInput(event);
    it.each([
      ['a string', input.body],
      ['a Uint8Array', new TextEncoder().encode(input.body)],
      ['a Buffer', Buffer.from(input.body)],
      ['a Uint8Array view into a larger buffer', new TextEncoder().encode(`xx${input.body}yy`).subarray(2, 2 + Buffer.byteLength(input.body))],
    ])('%s', async (_name, body) => {
      expect((await verifyBoardDelivery({ ...input, body: body as string | Uint8Array })).deliveryId).toBe(event.id);
    });

    it('never parsed JSON: a TypeError', async () => {
      await expect(verifyBoardDelivery({ ...input, body: JSON.parse(input.body) as never })).rejects.toThrow(TypeError);
    });
  });

  describe('takes the headers as', () => {
    const event = boardEvent('ping');
    const input = boardInput(event);
    it('a Fetch Headers', async () => {
      expect((await verifyBoardDelivery({ ...input, headers: new Headers(input.headers) })).deliveryId).toBe(event.id);
    });
    it('a plain object in any letter case', async () => {
      const upper = Object.fromEntries(Object.entries(input.headers).map(([k, v]) => [k.toUpperCase(), v]));
      expect((await verifyBoardDelivery({ ...input, headers: upper })).deliveryId).toBe(event.id);
    });
    it('Node’s req.headers and the Node request itself', async () => {
      const seen: Array<{ headers: http.IncomingHttpHeaders; req: http.IncomingMessage }> = [];
      const server = http.createServer((req, res) => {
        seen.push({ headers: req.headers, req });
        res.end();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { method: 'POST', headers: input.headers, body: input.body });
      } finally {
        server.close();
      }
      expect((await verifyBoardDelivery({ ...input, headers: seen[0]!.headers })).deliveryId).toBe(event.id);
      expect((await verifyBoardDelivery({ ...input, headers: seen[0]!.req })).deliveryId).toBe(event.id);
    });
  });

  it('accepts any of several secrets while one is rotated', async () => {
    const input = boardInput(boardEvent('ping'));
    expect((await verifyBoardDelivery({ ...input, secret: ['the-new-secret-0123456789', secret] })).known).toBe(true);
  });

  it('checks the timestamp against `now` and `tolerance`', async () => {
    const input = boardInput(boardEvent('ping'), {}, { timestamp: 1_800_000_000 });
    expect((await verifyBoardDelivery({ ...input, now: 1_800_000_299_000 })).timestamp).toBe(1_800_000_000);
    expect(await refusal(() => verifyBoardDelivery({ ...input, now: 1_800_000_301_000 }))).toEqual({ code: 'timestamp_out_of_tolerance', status: 401 });
    expect((await verifyBoardDelivery({ ...input, now: 1_800_000_400_000, toleranceSeconds: 600 })).timestamp).toBe(1_800_000_000);
  });

  it('schemaPolicy skip accepts an authentic event that fails the schema', async () => {
    const input = boardInput(boardEvent('task.created', { task: { title: 42 as unknown as string } }));
    expect((await refusal(() => verifyBoardDelivery(input))).code).toBe('schema_violation');
    expect((await verifyBoardDelivery({ ...input, schemaPolicy: 'skip' })).type).toBe('task.created');
  });

  describe('refuses, with the code and status the middleware answers', () => {
    const event = () => boardEvent('ping');
    it.each<[string, () => Parameters<typeof verifyBoardDelivery>[0], ErrorCode, number]>([
      ['no signature', () => boardInput(event(), { 'X-Svc-Signature': undefined }), 'signature_missing', 401],
      ['a malformed signature', () => boardInput(event(), { 'X-Svc-Signature': 'v1=xyz' }), 'signature_malformed', 401],
      ['a bot-style signature', () => boardInput(event(), { 'X-Svc-Signature': `sha256=${'a'.repeat(64)}` }), 'signature_malformed', 401],
      [
        'a signature sent twice (Headers)',
        () => {
          const input = boardInput(event());
          const headers = new Headers(input.headers);
          headers.append('X-Svc-Signature', input.headers['X-Svc-Signature']!);
          return { ...input, headers };
        },
        'signature_duplicated',
        401,
      ],
      [
        'a signature sent twice (two spellings in a plain object)',
        () => {
          const input = boardInput(event());
          return { ...input, headers: { ...input.headers, 'x-svc-signature': input.headers['X-Svc-Signature']! } };
        },
        'signature_duplicated',
        401,
      ],
      ['another secret', () => boardInput(event(), {}, { secret: 'another-secret-0123456789' }), 'signature_mismatch', 401],
      ['a changed body', () => ({ ...boardInput(event()), body: JSON.stringify(event()) }), 'signature_mismatch', 401],
      ['no timestamp', () => boardInput(event(), { 'X-Svc-Timestamp': undefined }), 'timestamp_missing', 401],
      ['a malformed timestamp', () => boardInput(event(), { 'X-Svc-Timestamp': '1.5e9' }), 'timestamp_malformed', 401],
      ['a stale timestamp', () => boardInput(event(), {}, { timestamp: Math.floor(Date.now() / 1000) - 301 }), 'timestamp_out_of_tolerance', 401],
      [
        'a body over the limit',
        () => {
          const big = boardEvent('task.created');
          big.task.description = 'x'.repeat(300 * 1024);
          return { ...boardInput(big), maxBodyBytes: '256kb' };
        },
        'body_too_large',
        413,
      ],
      [
        'invalid UTF-8 that is signed',
        () => {
          const bytes = Buffer.from([0x7b, 0xff, 0x7d]);
          const timestamp = Math.floor(Date.now() / 1000);
          const mac = createHmac('sha256', secret).update(`${timestamp}.`).update(bytes).digest('hex');
          return { body: bytes, headers: { 'X-Svc-Timestamp': String(timestamp), 'X-Svc-Signature': `v1=${mac}` }, secret };
        },
        'invalid_utf8',
        400,
      ],
      ['invalid JSON', () => boardInput('{"id":'), 'invalid_json', 400],
      ['a __proto__ key', () => boardInput(`{"__proto__":{"x":1},"id":"${randomUUID()}","type":"ping","sequence":0}`), 'forbidden_key', 400],
      ['an id that differs from X-Svc-Delivery', () => boardInput(event(), { 'X-Svc-Delivery': randomUUID() }), 'delivery_id_mismatch', 400],
      ['a type that differs from X-Svc-Event', () => boardInput(event(), { 'X-Svc-Event': 'task.created' }), 'event_type_mismatch', 400],
      ['an event that fails the schema', () => boardInput(boardEvent('task.created', { task: { title: 42 as unknown as string } })), 'schema_violation', 400],
      ['an event without a sequence', () => boardInput({ ...event(), sequence: -1 }), 'schema_violation', 400],
    ])('%s: %s', async (_name, input, code, status) => {
      expect(await refusal(() => verifyBoardDelivery(input()))).toEqual({ code, status });
    });
  });
});

describe('verifyBotDelivery', () => {
  it('returns the data of the event kind with its delivery id and the whole update', async () => {
    const update = botUpdate('messageCreate');
    const signed = signBotUpdate(update, { secret });
    const verified = await verifyBotDelivery({ body: signed.body, headers: new Headers(signed.headers), secret });
    expect(verified).toMatchObject({ deliveryId: update.id, known: true, kind: 'messageCreate', update });
    if (verified.known && verified.kind === 'messageCreate') expect(verified.data.message.id).toBe(update.event.messageCreate.message.id);
    else throw new Error('not narrowed to messageCreate');
  });

  describe('refuses, with the code and status the middleware answers', () => {
    const input = (update: object | string, change: Record<string, string | undefined> = {}) => {
      const signed = signBotUpdate(update, { secret });
      const headers: Record<string, string> = { ...signed.headers };
      for (const [name, value] of Object.entries(change)) {
        if (value === undefined) delete headers[name];
        else headers[name] = value;
      }
      return { body: signed.body, headers, secret };
    };
    it.each<[string, () => Parameters<typeof verifyBotDelivery>[0], ErrorCode, number]>([
      ['no signature', () => input(botUpdate('taskCreate'), { 'X-Svc-Signature': undefined }), 'signature_missing', 401],
      ['a board-style signature', () => input(botUpdate('taskCreate'), { 'X-Svc-Signature': `v1=${'a'.repeat(64)}` }), 'signature_malformed', 401],
      [
        'a signature sent twice',
        () => {
          const i = input(botUpdate('taskCreate'));
          return { ...i, headers: { ...i.headers, 'x-svc-signature': i.headers['X-Svc-Signature']! } };
        },
        'signature_duplicated',
        401,
      ],
      ['another secret', () => ({ ...input(botUpdate('taskCreate')), secret: 'another-secret-0123456789' }), 'signature_mismatch', 401],
      [
        'an update older than the retry window',
        () => input(botUpdate('taskCreate', undefined, { createdAt: new Date(Date.now() - 26 * 3600 * 1000).toISOString() })),
        'delivery_expired',
        401,
      ],
      [
        'a body over the limit',
        () => ({ ...input(botUpdate('taskCreate', { note: 'x'.repeat(300 * 1024) } as never)), maxBodyBytes: 256 * 1024 }),
        'body_too_large',
        413,
      ],
      ['invalid JSON', () => input('{"id":'), 'invalid_json', 400],
      ['a constructor key', () => input({ ...botUpdate('taskCreate'), constructor: { x: 1 } }), 'forbidden_key', 400],
      ['an id that differs from X-Svc-Delivery', () => input(botUpdate('taskCreate'), { 'X-Svc-Delivery': randomUUID() }), 'delivery_id_mismatch', 400],
      ['an update with two event members', () => input({ ...botUpdate('taskCreate'), event: { taskCreate: {}, taskDelete: {} } }), 'schema_violation', 400],
    ])('%s: %s', async (_name, make, code, status) => {
      expect(await refusal(() => verifyBotDelivery(make()))).toEqual({ code, status });
    });

    it('a bot signature checks the body alone (no timestamp)', async () => {
      const body = JSON.stringify(botUpdate('taskCreate'));
      expect((await verifyBotDelivery({ body, headers: { 'X-Svc-Signature': botSignature(secret, body) }, secret })).kind).toBe('taskCreate');
    });
  });
});

describe('the input of the standalone verifiers', () => {
  const input = () => boardInput(boardEvent('task.created'));

  it('is answered with a promise on every path: a refusal rejects, never throws at the call', async () => {
    const refused = verifyBoardDelivery(null as never);
    const forged = verifyBotDelivery({ ...signBotUpdate(botUpdate('taskCreate'), { secret }), secret: 'another-secret-0123456789' });
    expect([refused, forged]).toEqual([expect.any(Promise), expect.any(Promise)]);
    await expect(refused).rejects.toThrow(TypeError);
    await expect(forged).rejects.toMatchObject({ code: 'signature_mismatch' });
    await expect(verifyBoardDelivery(input())).resolves.toMatchObject({ known: true, type: 'task.created' });
  });

  it.each([
    ['no input', () => null],
    ['a string for input', () => 'body'],
    ['no headers', () => ({ ...input(), headers: null })],
    ['headers that are a string', () => ({ ...input(), headers: 'x-svc-signature: v1=aa' })],
    ['an unknown schema policy', () => ({ ...input(), schemaPolicy: 'warn' })],
    ['a clock that is not a number', () => ({ ...input(), now: '1700000000000' })],
    ['a clock that is not finite', () => ({ ...input(), now: Number.NaN })],
  ])('%s: a TypeError', async (_what, make) => {
    await expect(verifyBoardDelivery(make() as never)).rejects.toThrow(TypeError);
    await expect(verifyBotDelivery(make() as never)).rejects.toThrow(TypeError);
  });

  it('a function carrying body, headers and secret is no input: a TypeError', async () => {
    const board = Object.assign(() => undefined, input());
    await expect(verifyBoardDelivery(board as never)).rejects.toThrow(TypeError);
    const bot = signBotUpdate(botUpdate('taskCreate'), { secret });
    await expect(verifyBotDelivery(Object.assign(() => undefined, { body: bot.body, headers: bot.headers, secret }) as never)).rejects.toThrow(TypeError);
  });

  it('headers that are a function carrying the header values: a TypeError', async () => {
    const ok = input();
    await expect(verifyBoardDelivery({ ...ok, headers: Object.assign(() => undefined, ok.headers) } as never)).rejects.toThrow(TypeError);
    const bot = signBotUpdate(botUpdate('taskCreate'), { secret });
    await expect(verifyBotDelivery({ body: bot.body, headers: Object.assign(() => undefined, bot.headers), secret } as never)).rejects.toThrow(TypeError);
  });

  it('takes a body exactly as long as the limit, and refuses one byte more', async () => {
    const big = boardEvent('task.created');
    big.task.description = 'x'.repeat(300 * 1024);
    const ok = boardInput(big);
    const length = Buffer.byteLength(ok.body);
    expect((await verifyBoardDelivery({ ...ok, maxBodyBytes: length })).deliveryId).toBeDefined();
    expect(await refusal(() => verifyBoardDelivery({ ...ok, maxBodyBytes: length - 1 }))).toEqual({ code: 'body_too_large', status: 413 });
  });

  it('refuses a timestamp sent twice as timestamp_malformed, even when both are the same', async () => {
    const ok = input();
    const timestamp = ok.headers['X-Svc-Timestamp']!;
    expect(await refusal(() => verifyBoardDelivery({ ...ok, headers: { ...ok.headers, 'X-Svc-Timestamp': `${timestamp}, ${timestamp}` } }))).toEqual({
      code: 'timestamp_malformed',
      status: 401,
    });
  });

  it('skips the schema under schemaPolicy skip', async () => {
    const event = { ...boardEvent('task.created'), task: 'not an object' };
    expect(await refusal(() => verifyBoardDelivery(boardInput(event)))).toEqual({ code: 'schema_violation', status: 400 });
    expect((await verifyBoardDelivery({ ...boardInput(event), schemaPolicy: 'skip' })).deliveryId).toBe(event.id);
  });
});

describe('a signature header with anything around the signature', () => {
  it.each([
    ['before', (good: string) => `x${good}`],
    ['after', (good: string) => `${good}0`],
  ])('is malformed with text %s it, even when the MAC itself is right', async (_where, wrap) => {
    const board = boardInput(boardEvent('ping'));
    const boardHeader = board.headers['X-Svc-Signature']!;
    expect(await refusal(() => verifyBoardDelivery({ ...board, headers: { ...board.headers, 'X-Svc-Signature': wrap(boardHeader) } }))).toEqual({
      code: 'signature_malformed',
      status: 401,
    });
    const bot = signBotUpdate(botUpdate('taskCreate'), { secret });
    const botHeaders: Record<string, string> = { ...bot.headers, 'X-Svc-Signature': wrap(bot.headers['X-Svc-Signature']!) };
    expect(await refusal(() => verifyBotDelivery({ body: bot.body, headers: botHeaders, secret }))).toEqual({ code: 'signature_malformed', status: 401 });
  });
});
