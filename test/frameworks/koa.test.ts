import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { svcBoardWebhook } from '../../src';
import { silentLogger } from '../../src/testing';
import { createKoaServer } from '../../examples/frameworks/koa';
import { httpPost } from '../support/http-client';
import { CONTRACT_SECRET, describeWebhookContract } from '../support/webhook-contract';

describe('the Koa recipe (createNodeHandler in front of Koa), over HTTP', () => {
  let handled = 0;
  let baseUrl = '';
  const server: Server = createKoaServer(svcBoardWebhook({ secret: CONTRACT_SECRET, logger: silentLogger }).on('task.created', () => void handled++));

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  describeWebhookContract(
    () => baseUrl,
    () => handled,
  );

  it('every other request goes on to Koa', async () => {
    const res = await httpPost(baseUrl, '/elsewhere', { 'Content-Type': 'application/json' }, '{}');
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ ok: true, path: '/elsewhere' });
  });
});
