import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import request from 'supertest';
import { createNodeHandler, fastifyWebhook, svcBoardWebhook, svcBotWebhook, type BoardWebhookOptions } from '../../src';
import { expressVersions, memoryLogger } from '../support/apps';
import { post } from '../support/post';
import { BOARD_SECRET, BOT_SECRET, fixture, onBoard, signBoard, signBot } from '../support/sign';

/**
 * The mount rule: a webhook's `path` is relative to where it is mounted, as for an Express router,
 * and a full path that includes the mount prefix matches too. A signed POST that passes a webhook
 * on another path and ends in a 404 is logged once a minute per path, naming both paths.
 */
function board(options: Partial<BoardWebhookOptions> = {}) {
  const log = memoryLogger();
  const handled: string[] = [];
  const webhook = svcBoardWebhook({ secret: BOARD_SECRET, logger: log.logger, ...options }).onAny((event) => void handled.push(event.id));
  const warnings = () => log.lines.filter((l) => l.level === 40 && l.option === 'path');
  const mounts = () => log.lines.filter((l) => l.mountedAt !== undefined);
  return { webhook, handled, warnings, mounts };
}

describe.each(expressVersions)('mounted in %s', (_name, expressLib) => {
  it("answers under app.use('/api', board) at /api/webhooks/board", async () => {
    const { webhook, handled } = board();
    const event = fixture('board', 'task.created');
    await post(expressLib().use('/api', webhook), '/api/webhooks/board', signBoard(event)).expect(200);
    expect(handled).toEqual([event.id]);
  });

  it("logs once, at the first request it sees, the full path a mount makes it answer (a forgotten '/api' prefix shows)", async () => {
    const { webhook, mounts } = board();
    const app = expressLib().use('/api', webhook);
    app.get('/api/health', (_req, res) => void res.send('ok'));
    // svc posting to the path without the prefix never reaches the webhook: Express answers 404.
    await post(app, '/webhooks/board', signBoard(fixture('board', 'task.created'))).expect(404);
    expect(mounts()).toEqual([]);
    await request(app).get('/api/health').expect(200);
    await request(app).get('/api/health').expect(200);
    expect(mounts()).toEqual([expect.objectContaining({ level: 30, path: '/api/webhooks/board', mountedAt: '/api' })]);
  });

  it("answers at the mount point itself with path '/': app.use('/hooks/svc', …) takes POST /hooks/svc", async () => {
    const { webhook, handled } = board({ path: '/' });
    await post(expressLib().use('/hooks/svc', webhook), '/hooks/svc', signBoard(fixture('board', 'ping'))).expect(200);
    expect(handled).toHaveLength(1);
  });

  it('answers its default path under the mount prefix: /hooks/svc/webhooks/board', async () => {
    const { webhook, handled } = board();
    await post(expressLib().use('/hooks/svc', webhook), '/hooks/svc/webhooks/board', signBoard(fixture('board', 'ping'))).expect(200);
    expect(handled).toHaveLength(1);
  });

  it('keeps answering a full path that includes the mount prefix', async () => {
    const { webhook, handled } = board({ path: '/hooks/svc' });
    await post(expressLib().use('/hooks', webhook), '/hooks/svc', signBoard(fixture('board', 'ping'))).expect(200);
    expect(handled).toHaveLength(1);
  });

  it('answers inside a router mounted under a prefix', async () => {
    const { webhook, handled } = board();
    const router = expressLib.Router();
    router.use(webhook);
    await post(expressLib().use('/api', router), '/api/webhooks/board', signBoard(fixture('board', 'ping'))).expect(200);
    expect(handled).toHaveLength(1);
  });

  it('reads a board id from a path with :boardId under the mount prefix, and asks the resolver for it', async () => {
    const A = randomUUID();
    const asked: string[] = [];
    const { webhook, handled } = board({
      secret: ({ boardId }) => (asked.push(boardId), boardId === A ? BOARD_SECRET : undefined),
      path: '/webhooks/boards/:boardId',
    });
    await post(expressLib().use('/api', webhook), `/api/webhooks/boards/${A}`, signBoard(onBoard(fixture('board', 'ping'), A))).expect(200);
    expect([asked, handled.length]).toEqual([[A], 1]);
  });

  describe('a signed POST on another path', () => {
    it('is answered by Express (404) and logged once a minute per path, naming the path it came on, the one the webhook answers and the option', async () => {
      const { webhook, warnings } = board();
      const app = expressLib().use('/api', webhook);
      const res = await post(app, '/api/hooks/board', signBoard(fixture('board', 'ping')));
      expect(res.status).toBe(404);
      await post(app, '/api/hooks/board', signBoard(fixture('board', 'ping'))).expect(404);
      expect(warnings()).toEqual([expect.objectContaining({ path: '/api/hooks/board', answers: ['/api/webhooks/board'], option: 'path' })]);
      expect(warnings()[0]!.msg).toContain('POST /api/hooks/board was answered 404');
      // Another path is another line; a path outside the mount never reaches the webhook at all.
      await post(app, '/api/elsewhere', signBoard(fixture('board', 'ping'))).expect(404);
      await post(app, '/outside', signBoard(fixture('board', 'ping'))).expect(404);
      expect(warnings().map((w) => w.path)).toEqual(['/api/hooks/board', '/api/elsewhere']);
    });

    it('is no warning when it is not signed, or when another webhook or route answers it', async () => {
      const { webhook, warnings } = board();
      const bot = svcBotWebhook({ secret: BOT_SECRET, logger: memoryLogger().logger });
      const app = expressLib().use(webhook).use(bot);
      app.post('/status', (_req, res) => void res.send('ok'));
      await post(app, bot.path, signBot(fixture('bot', 'messageCreate'))).expect(200);
      await post(app, '/status', signBoard(fixture('board', 'ping'))).expect(200);
      await request(app).post('/nowhere').set('Content-Type', 'application/json').send('{}').expect(404);
      expect(warnings()).toEqual([]);
    });

    it('names every webhook it passed', async () => {
      const first = board();
      const second = board({ path: '/webhooks/board-two' });
      await post(expressLib().use('/api', first.webhook).use('/api', second.webhook), '/api/webhooks/board-3', signBoard(fixture('board', 'ping'))).expect(404);
      expect(first.warnings()).toEqual([expect.objectContaining({ answers: ['/api/webhooks/board', '/api/webhooks/board-two'] })]);
      expect(second.warnings()).toEqual([]);
    });
  });
});

describe('node:http', () => {
  it('answers a signed POST on another path 404 and logs the one warning', async () => {
    const { webhook, warnings } = board();
    const server = createServer(createNodeHandler(webhook));
    await post(server, '/hooks/board', signBoard(fixture('board', 'ping'))).expect(404);
    expect(warnings()).toEqual([expect.objectContaining({ path: '/hooks/board', answers: ['/webhooks/board'] })]);
  });
});

describe('Fastify, registered with a prefix', () => {
  it('answers at the prefix plus its path, and warns of a signed POST elsewhere under the prefix', async () => {
    const { webhook, handled, warnings } = board();
    const app = Fastify();
    await app.register(fastifyWebhook(webhook), { prefix: '/api' });
    const delivery = signBoard(fixture('board', 'ping'));
    expect((await app.inject({ method: 'POST', url: '/api/webhooks/board', headers: delivery.headers, payload: delivery.body })).statusCode).toBe(200);
    expect(handled).toHaveLength(1);
    const wrong = signBoard(fixture('board', 'ping'));
    const res = await app.inject({ method: 'POST', url: '/api/hooks/board', headers: wrong.headers, payload: wrong.body });
    expect([res.statusCode, res.json().error]).toEqual([404, 'Not Found']);
    expect((await app.inject({ method: 'POST', url: '/api/other', payload: '{}' })).statusCode).toBe(404);
    expect(warnings()).toEqual([expect.objectContaining({ path: '/api/hooks/board', answers: ['/api/webhooks/board'] })]);
    await app.close();
  });
});
