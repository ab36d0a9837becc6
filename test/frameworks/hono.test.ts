import { serve, type ServerType } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { createWebHandler, svcBoardWebhook } from '../../src';
import { boardEvent, signBoardEvent, silentLogger } from '../../src/testing';
import { createHonoApp } from '../../examples/frameworks/hono';
import { httpPost } from '../support/http-client';
import { CONTRACT_SECRET, describeWebhookContract } from '../support/webhook-contract';

describe('the Hono recipe (createWebHandler), on @hono/node-server over HTTP', () => {
  let handled = 0;
  let baseUrl = '';
  let server: ServerType;
  const board = svcBoardWebhook({ secret: CONTRACT_SECRET, logger: silentLogger }).on('task.created', () => void handled++);
  const app = createHonoApp(board);
  // What users get wrong: a middleware that reads the JSON before the webhook sees the request.
  const receive = createWebHandler(board);
  app.post('/parsed-first', async (c) => {
    await c.req.json();
    return receive(c.req.raw);
  });

  beforeAll(async () => {
    await new Promise<void>((resolve) => {
      server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve());
    });
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  describeWebhookContract(
    () => baseUrl,
    () => handled,
  );

  it('a body read before the webhook: 500 body_already_consumed that says what to do, never a hang', async () => {
    const signed = signBoardEvent(boardEvent('task.created'), { secret: CONTRACT_SECRET });
    const res = await httpPost(baseUrl, '/parsed-first', signed.headers, signed.body);
    expect(res.status).toBe(500);
    expect(res.json().code).toBe('body_already_consumed');
    expect(res.json().message).toMatch(/before anything reads it/);
  });
});
