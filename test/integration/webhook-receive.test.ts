import { createWebHandler, svcBoardWebhook, svcBotWebhook, type WebhookRequest } from '../../src';
import { boardEvent, botCommand, signBoardEvent, signBotUpdate, silentLogger, type SignedDelivery } from '../../src/testing';

const secret = 'receive-secret-0123456789abcdef';

function board(options: Parameters<typeof svcBoardWebhook>[0] & object = { secret }) {
  return svcBoardWebhook({ logger: silentLogger, ...(typeof options === 'object' && !Array.isArray(options) ? options : {}) } as never);
}

/** A delivery as a serverless event or a queue hands it over: the body read, the headers a plain object. */
function plain(signed: SignedDelivery, overrides: Partial<WebhookRequest> = {}): WebhookRequest {
  return { body: signed.body, headers: { ...signed.headers }, url: '/webhooks/board', ...overrides };
}

const codeOf = (answer: { body: string }) => (JSON.parse(answer.body) as { code?: string }).code;

describe('webhook.receive(): the pipeline with no framework', () => {
  describe('given a request whose body was already read', () => {
    it('runs the handlers of a signed delivery once and answers 200 with a JSON body', async () => {
      const seen: string[] = [];
      const webhook = board().on('task.created', (event) => void seen.push(event.id));
      const signed = signBoardEvent(boardEvent('task.created'), { secret });
      const answer = await webhook.receive(plain(signed));
      expect([answer.status, answer.body, answer.headers['Content-Type']]).toEqual([200, '{"ok":true}', 'application/json; charset=utf-8']);
      expect(seen).toEqual([JSON.parse(signed.body).id]);
    });

    it('takes the body as bytes too, and verifies exactly those bytes', async () => {
      const webhook = board().on('task.created', () => undefined);
      const signed = signBoardEvent(boardEvent('task.created'), { secret });
      expect((await webhook.receive(plain(signed, { body: new TextEncoder().encode(signed.body) }))).status).toBe(200);
      // One byte more than was signed: refused.
      expect(codeOf(await webhook.receive(plain(signed, { body: `${signed.body} ` })))).toBe('signature_mismatch');
    });

    it('answers a repeat of a handled delivery as a duplicate, without running the handlers again', async () => {
      let runs = 0;
      const webhook = board().on('task.created', () => void runs++);
      const signed = signBoardEvent(boardEvent('task.created'), { secret });
      await webhook.receive(plain(signed));
      const again = await webhook.receive(plain(signed));
      expect([again.status, again.body, runs]).toEqual([200, '{"ok":true,"duplicate":true}', 1]);
    });

    it('refuses a forged delivery with 401 and runs nothing', async () => {
      let runs = 0;
      const webhook = board().on('task.created', () => void runs++);
      const answer = await webhook.receive(plain(signBoardEvent(boardEvent('task.created'), { secret: 'another-secret-0123456789abc' })));
      expect([answer.status, codeOf(answer), runs]).toEqual([401, 'signature_mismatch', 0]);
    });

    it('refuses a body over maxBodyBytes with 413 before verifying it', async () => {
      const webhook = board({ secret, maxBodyBytes: 256 * 1024 });
      const signed = signBoardEvent(boardEvent('task.created', { task: { description: 'x'.repeat(300 * 1024) } }), { secret });
      const answer = await webhook.receive(plain(signed));
      expect([answer.status, codeOf(answer)]).toEqual([413, 'body_too_large']);
    });

    it('reads headers whatever their case, and sees a header sent twice as a list (a repeated signature is refused)', async () => {
      const webhook = board().on('task.created', () => undefined);
      const signed = signBoardEvent(boardEvent('task.created'), { secret });
      const lower = Object.fromEntries(Object.entries(signed.headers).map(([k, v]) => [k.toLowerCase(), v]));
      expect((await webhook.receive(plain(signed, { headers: lower }))).status).toBe(200);
      const twice = signBoardEvent(boardEvent('task.created'), { secret });
      const sig = twice.headers['X-Svc-Signature']!;
      const answer = await webhook.receive(plain(twice, { headers: { ...twice.headers, 'X-Svc-Signature': [sig, sig] } }));
      expect([answer.status, codeOf(answer)]).toEqual([401, 'signature_duplicated']);
    });

    it('answers another method 405 with Allow: POST', async () => {
      const answer = await board().receive(plain(signBoardEvent(boardEvent('ping'), { secret }), { method: 'GET' }));
      expect([answer.status, answer.headers.Allow, codeOf(answer)]).toEqual([405, 'POST', 'method_not_allowed']);
    });

    it('says when svc may retry: a handler that fails is 500, and one past its deadline carries Retry-After', async () => {
      const failing = board().on('task.created', () => {
        throw new Error('boom');
      });
      const failed = await failing.receive(plain(signBoardEvent(boardEvent('task.created'), { secret })));
      expect([failed.status, codeOf(failed)]).toEqual([500, 'handler_failed']);
      const slow = board({ secret, timeoutMs: 50 }).on('task.created', () => new Promise((resolve) => setTimeout(resolve, 200)));
      const late = await slow.receive(plain(signBoardEvent(boardEvent('task.created'), { secret })));
      expect([late.status, codeOf(late), late.headers['Retry-After']]).toEqual([503, 'handler_timeout', '1']);
      await slow.close();
    });

    it('reads the path for a webhook whose path names the bot', async () => {
      const botId = '0f8fad5b-d9cb-469f-a165-70867728950e';
      const commands: string[] = [];
      const botSecret = 'bot-secret-0123456789abcdef';
      const bot = svcBotWebhook({ logger: silentLogger, path: '/bots/:botId', secret: ({ botId: id }) => (id === botId ? botSecret : undefined) }).command(
        'deploy',
        (data) => void commands.push(data.message.command!.name),
      );
      const signed = signBotUpdate(botCommand('deploy', '', undefined, { botUserId: botId }), { secret: botSecret });
      const answer = await bot.receive({ body: signed.body, headers: signed.headers, url: `/bots/${botId}` });
      expect([answer.status, commands]).toEqual([200, ['deploy']]);
    });

    it('gives handlers ctx.request, a Fetch view of the request made on first use', async () => {
      let seen: string | null | undefined;
      const webhook = board().on('task.created', (_event, ctx) => void (seen = ctx.request?.headers.get('x-svc-event')));
      expect((await webhook.receive(plain(signBoardEvent(boardEvent('task.created'), { secret })))).status).toBe(200);
      expect(seen).toBe('task.created');
    });
  });

  describe('given a Fetch Request', () => {
    it('answers exactly as createWebHandler does', async () => {
      const webhook = board().on('task.created', () => undefined);
      const handler = createWebHandler(webhook);
      for (const signed of [
        signBoardEvent(boardEvent('task.created'), { secret }),
        signBoardEvent(boardEvent('task.created'), { secret: 'forged-secret-0123456789abcd' }),
      ]) {
        const make = () => new Request('http://127.0.0.1/webhooks/board', { method: 'POST', headers: signed.headers, body: signed.body });
        const viaReceive = await webhook.receive(make());
        const viaHandler = await handler(make());
        expect([viaHandler.status, await viaHandler.text()]).toEqual([
          viaReceive.status,
          viaReceive.status === 200 ? '{"ok":true,"duplicate":true}' : viaReceive.body,
        ]);
      }
    });
  });

  describe('when the pipeline itself fails', () => {
    it('answers 500 internal_error rather than rejecting', async () => {
      let runs = 0;
      const webhook = board().on('task.created', () => void runs++);
      // A request object whose headers throw when read: nothing of the pipeline can describe that.
      const hostile = {
        body: '{}',
        get headers(): never {
          throw new Error('unreadable');
        },
      } as unknown as WebhookRequest;
      const answer = await webhook.receive(hostile);
      expect([answer.status, codeOf(answer), runs]).toEqual([500, 'internal_error', 0]);
    });
  });
});
