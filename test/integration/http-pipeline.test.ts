import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express5 from 'express';
import request from 'supertest';
import { createNodeHandler, svcBoardWebhook, svcBotWebhook } from '../../src';
import { appWith, expressVersions, silentLogger } from '../support/apps';
import { post } from '../support/post';
import { BOARD_SECRET, BOT_SECRET, fixture, signBoard, signBot } from '../support/sign';

describe.each(expressVersions)('HTTP handling in %s', (_name, expressLib) => {
  const board = () => svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger });

  describe('media type', () => {
    it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/jsonp'])('415 for Content-Type %s', async (type) => {
      const res = await post(appWith(expressLib, board()), '/webhooks/board', signBoard(fixture('board', 'ping')), { 'Content-Type': type });
      expect(res.status).toBe(415);
      expect(res.body.code).toBe('unsupported_media_type');
    });

    it('accepts application/json with a charset parameter', async () => {
      await post(appWith(expressLib, board()), '/webhooks/board', signBoard(fixture('board', 'ping')), {
        'Content-Type': 'application/json; charset=utf-8',
      }).expect(200);
    });

    it.each(['gzip', 'deflate', 'br'])('415 for Content-Encoding %s', async (encoding) => {
      const res = await post(appWith(expressLib, board()), '/webhooks/board', signBoard(fixture('board', 'ping')), { 'Content-Encoding': encoding });
      expect(res.status).toBe(415);
      expect(res.body.code).toBe('content_encoding_unsupported');
    });
  });

  describe('body size', () => {
    it('accepts a 256 KB body, the largest the spec sends', async () => {
      const handler = jest.fn();
      const app = appWith(expressLib, board().on('task.created', handler));
      const event = fixture('board', 'task.created');
      event.task.description += 'x'.repeat(256 * 1024 - JSON.stringify(event).length);
      const signed = signBoard(event);
      expect(Buffer.byteLength(signed.body)).toBe(256 * 1024);
      await post(app, '/webhooks/board', signed).expect(200);
      expect(handler).toHaveBeenCalledTimes(1);
    });

    it('413 for a body over the limit, answered before the rest is sent and without reading it', async () => {
      const handler = jest.fn();
      const signed = signBoard(fixture('board', 'ping'));
      const res = await announceLargeBody(appWith(expressLib, board().onAny(handler)), signed.headers, signed.body.slice(0, 100));
      expect(res.status).toBe(413);
      expect(JSON.parse(res.body).code).toBe('body_too_large');
      expect(res.connection).toBe('close');
      expect(handler).not.toHaveBeenCalled();
    });

    it('a request refused before its body is read is answered at once, and its connection closed', async () => {
      const signed = signBoard(fixture('board', 'ping'));
      const { ['X-Svc-Signature']: _dropped, ...unsigned } = signed.headers;
      const res = await announceLargeBody(appWith(expressLib, board()), unsigned, signed.body.slice(0, 100));
      expect(res.status).toBe(401);
      expect(JSON.parse(res.body).code).toBe('signature_missing');
      expect(res.connection).toBe('close');
    });

    it('413 for a chunked body that grows past the limit', async () => {
      const app = appWith(expressLib, svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger, maxBodyBytes: '256kb' }));
      const signed = signBoard(fixture('board', 'ping'));
      const res = await post(app, '/webhooks/board', { ...signed, body: signed.body + ' '.repeat(300 * 1024) });
      expect(res.status).toBe(413);
    });
  });

  describe('a body parser mounted before the middleware', () => {
    it('express.json() consumed the stream: 500 body_already_consumed that says how to mount it, never a hang', async () => {
      const app = expressLib();
      app.use(expressLib.json({ limit: '1mb' }));
      app.use(board());
      const res = await post(app, '/webhooks/board', signBoard(fixture('board', 'ping')));
      expect(res.status).toBe(500);
      expect(res.body.code).toBe('body_already_consumed');
      expect(res.body.message).toContain('by another body parser (such as express.json()): mount the svc-webhooks middleware before it');
      expect(res.body.message).toContain('express.raw({ type: "application/json", limit: 524288 })');
    });

    it("the express.raw() the message names takes a 300 KB delivery, which svc may send (express.raw's own default limit would refuse it)", async () => {
      const handler = jest.fn();
      const event = { ...fixture('board', 'ping'), padding: 'x'.repeat(300 * 1024) };
      const app = expressLib();
      app.post('/hooks/board', expressLib.raw({ type: 'application/json', limit: 524288 }), board().on('ping', handler));
      await post(app, '/hooks/board', signBoard(event)).expect(200);
      expect(handler).toHaveBeenCalledTimes(1);
      const defaults = expressLib();
      defaults.post('/hooks/board', expressLib.raw({ type: 'application/json' }), board());
      await post(defaults, '/hooks/board', signBoard(event)).expect(413);
    });

    it('express.raw() left the exact bytes: the delivery is verified and handled', async () => {
      const handler = jest.fn();
      const app = expressLib();
      app.post('/hooks/board', expressLib.raw({ type: 'application/json', limit: '1mb' }), board().on('ping', handler));
      await post(app, '/hooks/board', signBoard(fixture('board', 'ping'))).expect(200);
      expect(handler).toHaveBeenCalledTimes(1);
    });
  });

  describe('mounting', () => {
    it('with `path`, app.use() handles POST to that path only and passes every other request on', async () => {
      const bot = svcBotWebhook({ secret: BOT_SECRET, logger: silentLogger, path: '/svc/bot' });
      const app = appWith(expressLib, bot);
      app.post('/other', (_req, res) => void res.status(201).send('other'));
      app.get('/svc/bot', (_req, res) => void res.status(204).end());
      await post(app, '/svc/bot', signBot(fixture('bot', 'messageCreate'))).expect(200);
      await post(app, '/svc/bot?source=svc', signBot(fixture('bot', 'messageCreate'))).expect(200);
      await request(app).post('/other').set('Content-Type', 'application/json').send('{}').expect(201);
      await request(app).get('/svc/bot').expect(204);
      await post(app, '/webhooks/bot', signBot(fixture('bot', 'messageCreate'))).expect(404);
    });

    it('without `path`, app.use() answers the documented default paths', async () => {
      const app = appWith(expressLib, board(), svcBotWebhook({ secret: BOT_SECRET, logger: silentLogger }));
      await post(app, '/webhooks/board', signBoard(fixture('board', 'ping'))).expect(200);
      await post(app, '/webhooks/bot', signBot(fixture('bot', 'messageCreate'))).expect(200);
    });

    it('as a route handler, it handles that route whatever its path option', async () => {
      const app = expressLib();
      app.post('/integrations/svc-board', board());
      await post(app, '/integrations/svc-board', signBoard(fixture('board', 'ping'))).expect(200);
    });

    it('after an earlier route that called next(), app.use() still passes other paths on', async () => {
      const app = expressLib();
      let earlierRouteRan = false;
      app.post(/^\/api\//, (_req, _res, next) => {
        earlierRouteRan = true;
        next();
      });
      app.use(svcBotWebhook({ secret: BOT_SECRET, logger: silentLogger }));
      app.post('/api/login', (_req, res) => void res.status(201).send('logged in'));
      await request(app).post('/api/login').set('Content-Type', 'application/json').send('{}').expect(201);
      expect(earlierRouteRan).toBe(true);
    });

    it('in a router mounted under a prefix, `path` is the full URL path the sender posts to', async () => {
      const app = expressLib();
      const router = expressLib.Router();
      router.use(svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger, path: '/api/hooks/board' }));
      app.use('/api', router);
      await post(app, '/api/hooks/board', signBoard(fixture('board', 'ping'))).expect(200);
    });
  });
});

describe('as a plain node:http handler', () => {
  it('handles deliveries and leaves other requests to the fallback', async () => {
    const handler = jest.fn();
    const mw = svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger }).on('ping', handler);
    const server = http.createServer((req, res) =>
      mw(req, res, () => {
        res.statusCode = 404;
        res.end();
      }),
    );
    await post(server, '/webhooks/board', signBoard(fixture('board', 'ping'))).expect(200);
    await request(server).get('/').expect(404);
    expect(handler).toHaveBeenCalledTimes(1);
  });
});

/** Announces a 64 MB body but sends only `start`: the answer must not wait for the rest. */
async function announceLargeBody(
  app: http.RequestListener,
  headers: Record<string, string>,
  start: string,
): Promise<{ status: number; body: string; connection?: string }> {
  const server = http.createServer(app).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise((resolve, reject) => {
      const req = http.request(
        { port, host: '127.0.0.1', method: 'POST', path: '/webhooks/board', headers: { ...headers, 'Content-Length': String(64 * 1024 * 1024) } },
        (r) => {
          let body = '';
          r.on('data', (c) => (body += c));
          r.on('end', () => resolve({ status: r.statusCode!, body, connection: r.headers.connection }));
        },
      );
      req.on('error', reject);
      req.write(start);
    });
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

describe('createNodeHandler', () => {
  it('receives deliveries in front of an Express app and hands every other request to it', async () => {
    const handler = jest.fn();
    const app = express5();
    app.get('/health', (_req, res) => void res.send('up'));
    const server = http.createServer(createNodeHandler(svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger }).on('ping', handler), app));
    await post(server, '/webhooks/board', signBoard(fixture('board', 'ping'))).expect(200);
    await request(server).get('/health').expect(200, 'up');
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('without a fallback answers other requests 404 with a JSON code', async () => {
    const server = http.createServer(createNodeHandler(svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger })));
    const res = await request(server).get('/elsewhere');
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  });
});

// Keep the express5 import used for its types even when only express4 runs a case.
export type App = express5.Express;
