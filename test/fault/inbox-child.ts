/**
 * A process of the fault test's cluster run: `receiver` (a board webhook in inbox mode behind
 * node:http: it claims, enqueues and answers) or `worker` (runs the handlers, recording each run in
 * its effect file, see effect-log.ts). The de-dup store and the inbox are on the Redis Cluster whose
 * seed nodes FAULT_CLUSTER lists. Every answer carries the process's pid in X-Fault-Pid. SIGTERM
 * closes it gracefully.
 */
import { createServer } from 'node:http';
import { createNodeHandler, redisStore } from '../../src';
import { EffectWriter, effectFile } from './effect-log';
import { faultWebhook, withPid } from './fault-webhook';

const env = process.env;
const role = env.FAULT_ROLE;
const seeds = env.FAULT_CLUSTER!.split(',');
const effects = new EffectWriter(effectFile(env.FAULT_DIR!, process.pid));
const store = redisStore({ cluster: seeds, commandTimeoutMs: 500 });

const board = faultWebhook(store, effects, { inbox: { connection: { cluster: seeds }, retryDelayMs: 100, maxRetryDelayMs: 1000 } });

if (role === 'receiver') {
  const handle = createNodeHandler(board);
  const server = createServer(withPid(handle));
  server.keepAliveTimeout = 30_000;
  server.listen(Number(env.FAULT_PORT), '127.0.0.1');
  process.once('SIGTERM', () => {
    server.close();
    void board
      .close()
      .then(async () => {
        server.closeAllConnections();
        await store.close();
        process.exit(0);
      })
      .catch(() => process.exit(1));
  });
} else {
  // A lock that outlives the failover (about 3 s): a worker that lost Redis for that long keeps its jobs.
  const worker = board.work({ concurrency: 10, lockDurationMs: 8000, stalledIntervalMs: 1000 });
  process.once('SIGTERM', () => {
    void worker
      .close()
      .then(async () => {
        await board.close();
        await store.close();
        process.exit(0);
      })
      .catch(() => process.exit(1));
  });
}
