/**
 * A receiver process of the fault test: a board webhook whose handler records its runs in an
 * effect file (see effect-log.ts), behind Express (`app.use`) or node:http (`createNodeHandler`),
 * with the store named by FAULT_STORE. Every answer carries the process's pid in X-Fault-Pid.
 * SIGTERM closes it gracefully: no new deliveries (503), running handlers and commits finish.
 */
import { createServer } from 'node:http';
import express from 'express';
import { createNodeHandler } from '../../src';
import type { Mount } from './config';
import { EffectWriter, effectFile } from './effect-log';
import { faultWebhook, withPid } from './fault-webhook';
import { storeKind } from './stores';

const env = process.env;
const mount = env.FAULT_MOUNT as Mount;
const port = Number(env.FAULT_PORT);
const effects = new EffectWriter(effectFile(env.FAULT_DIR!, process.pid));
const kind = storeKind(env.FAULT_STORE);
const store = kind.open(env);

const board = faultWebhook(store, effects, { slowRuns: true, effect: kind.effect?.bind(kind) });

const server = createServer(withPid(mount === 'express' ? express().use(board) : createNodeHandler(board)));
server.keepAliveTimeout = 30_000;
server.listen(port, '127.0.0.1');

process.once('SIGTERM', () => {
  server.close();
  void board
    .close()
    .then(async () => {
      server.closeAllConnections();
      await store.close?.();
      process.exit(0);
    })
    .catch(() => process.exit(1));
});
