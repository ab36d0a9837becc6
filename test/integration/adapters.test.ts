import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { createNodeHandler, fastifyWebhook, svcBoardWebhook, type BoardContext } from '../../src';
import { boardEvent, signBoardEvent, silentLogger } from '../../src/testing';
import { httpPost } from '../support/http-client';

const secret = 'adapter-secret-0123456789';

describe('createNodeHandler', () => {
  it('ctx.req is the node:http request and ctx.request a Fetch view of it', async () => {
    let seen: BoardContext | undefined;
    const board = svcBoardWebhook({ secret, logger: silentLogger }).on('task.created', (_event, ctx) => {
      seen = ctx;
    });
    const server = http.createServer(createNodeHandler(board));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const event = boardEvent('task.created');
      const signed = signBoardEvent(event, { secret });
      const res = await httpPost(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, '/webhooks/board', signed.headers, signed.body);
      expect(res.status).toBe(200);
      expect(seen!.req).toBeInstanceOf(http.IncomingMessage);
      expect(seen!.req!.headers['x-svc-delivery']).toBe(event.id);
      expect(seen!.request!.headers.get('x-svc-delivery')).toBe(event.id);
      expect(seen!.request!.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/webhooks\/board$/);
    } finally {
      server.close();
    }
  });

  it('serves HTTP/2 through node:http2’s compatibility API; ctx.request leaves the pseudo-headers out', async () => {
    let seen: Request | undefined;
    const board = svcBoardWebhook({ secret, logger: silentLogger }).on('task.created', (_event, ctx) => {
      seen = ctx.request;
    });
    const server = http2.createServer(createNodeHandler(board) as unknown as Parameters<typeof http2.createServer>[0]);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      const event = boardEvent('task.created');
      const signed = signBoardEvent(event, { secret });
      const headers = Object.fromEntries(Object.entries(signed.headers).map(([name, value]) => [name.toLowerCase(), value]));
      const status = await new Promise<number>((resolve, reject) => {
        const req = client.request({ ':method': 'POST', ':path': '/webhooks/board', ...headers });
        let answered = 0;
        req.on('response', (h) => (answered = Number(h[':status'])));
        req.on('end', () => resolve(answered));
        req.on('error', reject);
        req.resume();
        req.end(signed.body);
      });
      expect(status).toBe(200);
      expect(seen!.headers.get('x-svc-delivery')).toBe(event.id);
      expect(new URL(seen!.url).pathname).toBe('/webhooks/board');
    } finally {
      await new Promise<void>((resolve) => client.close(resolve));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('anything but a webhook made by this library: a TypeError at setup', () => {
    expect(() => createNodeHandler((() => undefined) as never)).toThrow(TypeError);
  });
});

describe('fastifyWebhook', () => {
  it('takes the route path from its options', async () => {
    const handler = jest.fn();
    const app = Fastify();
    app.register(fastifyWebhook(svcBoardWebhook({ secret, logger: silentLogger }).on('task.created', handler), { path: '/hooks/svc' }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const signed = signBoardEvent(boardEvent('task.created'), { secret });
      const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      expect((await httpPost(base, '/hooks/svc', signed.headers, signed.body)).status).toBe(200);
      expect((await httpPost(base, '/webhooks/board', signed.headers, signed.body)).status).toBe(404);
      expect(handler).toHaveBeenCalledTimes(1);
    } finally {
      await app.close();
    }
  });

  it('answers a handler that keeps running past the deadline 503 with Retry-After, as the Express mount does', async () => {
    const app = Fastify();
    app.register(fastifyWebhook(svcBoardWebhook({ secret, logger: silentLogger, timeoutMs: 20 }).on('task.created', () => new Promise(() => undefined))));
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const signed = signBoardEvent(boardEvent('task.created'), { secret });
      const res = await httpPost(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, '/webhooks/board', signed.headers, signed.body);
      expect(res.status).toBe(503);
      expect(res.json().code).toBe('handler_timeout');
      expect(res.headers['retry-after']).toBe('1');
    } finally {
      await app.close();
    }
  });
});
