import { Module, type INestApplication, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { svcBoardWebhook } from '../../src';
import { boardEvent, signBoardEvent, silentLogger } from '../../src/testing';
import { createNestExpressApp, createNestFastifyApp } from '../../examples/frameworks/nestjs';
import { httpPost } from '../support/http-client';
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

  describeWebhookContract(
    () => baseUrl,
    () => handled,
  );
});

describe('the NestJS recipe on Express, done the other way', () => {
  it('a webhook applied through a MiddlewareConsumer runs behind Nest’s body parser: 500 body_already_consumed, never a hang', async () => {
    const board = svcBoardWebhook({ secret: CONTRACT_SECRET, logger: silentLogger });
    class BehindParser implements NestModule {
      configure(consumer: MiddlewareConsumer): void {
        consumer.apply(board).forRoutes('webhooks/board');
      }
    }
    Module({})(BehindParser);
    const app = await NestFactory.create(BehindParser, { logger: false });
    await app.listen(0, '127.0.0.1');
    try {
      const signed = signBoardEvent(boardEvent('task.created'), { secret: CONTRACT_SECRET });
      const res = await httpPost(
        `http://127.0.0.1:${((app.getHttpServer() as Server).address() as AddressInfo).port}`,
        '/webhooks/board',
        signed.headers,
        signed.body,
      );
      expect(res.status).toBe(500);
      expect(res.json().code).toBe('body_already_consumed');
    } finally {
      await app.close();
    }
  });
});
