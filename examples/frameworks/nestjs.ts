/**
 * NestJS. On the Fastify platform, register the webhook's Fastify plugin; on the Express platform,
 * `app.use()` it before `listen()`, which puts it in front of Nest's JSON body parser.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { fastifyWebhook, type BoardWebhookMiddleware } from '../../src'; // in your project: from 'svc-webhooks'

// Your application module. (Written as a call, `@Module({}) class AppModule {}` in a Nest project,
// so that this file compiles without the experimentalDecorators setting.)
class AppModule {}
Module({})(AppModule);

export async function createNestFastifyApp(board: BoardWebhookMiddleware): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter(), { logger: false });
  await app.register(fastifyWebhook(board)); // POST /webhooks/board, raw bytes
  return app;
}

export async function createNestExpressApp(board: BoardWebhookMiddleware): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule, { logger: false });
  app.use(board); // before listen(): in front of Nest's body parser
  return app;
}
