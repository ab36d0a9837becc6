import express from 'express';
import type { RequestListener } from 'node:http';
import { redisStore, svcBoardWebhook } from '../../src';
import { SVC_SECRET } from '../signing';
import { trivialHandler } from './handler';

/**
 * svc-webhooks with the shared Redis store, against the local redis-server the bench started
 * (SVC_BENCH_REDIS_URL): every delivery costs a claim and a commit round trip.
 */
export function createListener(): RequestListener {
  const url = process.env.SVC_BENCH_REDIS_URL;
  if (url === undefined) throw new Error('bench: SVC_BENCH_REDIS_URL is not set; bench/run.ts starts redis-server and sets it');
  const store = redisStore({ url, prefix: `bench:${process.pid}:` });
  return express().use(svcBoardWebhook({ secret: SVC_SECRET, store }).on('task.updated', trivialHandler));
}
