import express from 'express';
import type { RequestListener } from 'node:http';
import { postgresStore, svcBoardWebhook, type BoardHandler, type PostgresStore } from '../../src';
import { SVC_SECRET } from '../signing';
import { trivialHandler } from './handler';

/** The PostgreSQL store on the local server the bench started (SVC_BENCH_POSTGRES_URL), its table migrated. */
export function benchPostgresStore(): PostgresStore {
  const connectionString = process.env.SVC_BENCH_POSTGRES_URL;
  if (connectionString === undefined) throw new Error('bench: SVC_BENCH_POSTGRES_URL is not set; bench/run.ts starts postgres and sets it');
  return postgresStore({ connectionString });
}

export function postgresListener(handler: BoardHandler): RequestListener {
  return express().use(svcBoardWebhook({ secret: SVC_SECRET, store: benchPostgresStore() }).on('task.updated', handler));
}

/**
 * svc-webhooks with the PostgreSQL store and a handler outside any transaction: every delivery
 * costs a claim and a commit round trip.
 */
export function createListener(): RequestListener {
  return postgresListener(trivialHandler);
}
