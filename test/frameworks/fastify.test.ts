import type { AddressInfo } from 'node:net';
import { svcBoardWebhook } from '../../src';
import { silentLogger } from '../../src/testing';
import { createFastifyApp } from '../../examples/frameworks/fastify';
import { httpPost } from '../support/http-client';
import { CONTRACT_SECRET, describeWebhookContract } from '../support/webhook-contract';

describe('the Fastify recipe (fastifyWebhook plugin), over HTTP', () => {
  let handled = 0;
  let baseUrl = '';
  const app = createFastifyApp(svcBoardWebhook({ secret: CONTRACT_SECRET, logger: silentLogger }).on('task.created', () => void handled++));

  beforeAll(async () => {
    await app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterAll(() => app.close());

  describeWebhookContract(
    () => baseUrl,
    () => handled,
  );

  it('the app’s other routes keep Fastify’s JSON parser', async () => {
    const res = await httpPost(baseUrl, '/api/notes', { 'Content-Type': 'application/json' }, '{"a":1}');
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ received: { a: 1 } });
  });

  it('a delivery that is not JSON gets the pipeline’s own 415 unsupported_media_type', async () => {
    const res = await httpPost(baseUrl, '/webhooks/board', { 'Content-Type': 'text/plain' }, 'hello');
    expect(res.status).toBe(415);
    expect(res.json().code).toBe('unsupported_media_type');
  });

  it('a delivery without a Content-Type: 415 unsupported_media_type', async () => {
    const res = await httpPost(baseUrl, '/webhooks/board', {}, '{}');
    expect(res.status).toBe(415);
    expect(res.json().code).toBe('unsupported_media_type');
  });
});
