import type { INestApplication } from '@nestjs/common';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { svcBoardWebhook } from '../../src';
import { silentLogger } from '../../src/testing';
import { createNestExpressApp, createNestFastifyApp } from '../../examples/frameworks/nestjs';
import { CONTRACT_SECRET, describeWebhookContract } from '../support/webhook-contract';

describe.each([
  ['on the Fastify platform (fastifyWebhook plugin)', createNestFastifyApp],
  ['on the Express platform (app.use before listen)', createNestExpressApp],
] as const)('the NestJS recipe %s, over HTTP', (_platform, create) => {
  let handled = 0;
  let baseUrl = '';
  let app: INestApplication;

  beforeAll(async () => {
    app = await create(svcBoardWebhook({ secret: CONTRACT_SECRET, logger: silentLogger }).on('task.created', () => void handled++));
    await app.listen(0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${((app.getHttpServer() as Server).address() as AddressInfo).port}`;
  });
  afterAll(() => app.close());

  describeWebhookContract(() => baseUrl, () => handled);
});
