/**
 * A receiver process for the parking tests: a board webhook on the store named by PARK_STORE
 * (memory, redis or postgres at PARK_STORE_URL), on a clock the test drives. Its handler throws
 * while it is broken. Control routes (loopback only, for the test): `POST /clock?ms=<epoch ms>` sets
 * the clock, `POST /fix` mends the handler, `POST /replay?id=<id>` replays a parked delivery in this
 * process. It prints `listening <port>` and one `ran <delivery id>` line per handler run on stdout.
 */
import { createServer } from 'node:http';
import { memoryStore, postgresStore, redisStore, svcBoardWebhook, createNodeHandler, type DeliveryStore } from '../../../src';

const env = process.env;
const clock = { now: Number(env.PARK_START_MS) };
const now = () => clock.now;
const store: DeliveryStore =
  env.PARK_STORE === 'redis'
    ? redisStore({ url: env.PARK_STORE_URL!, prefix: env.PARK_PREFIX ?? 'svc-webhooks:' })
    : env.PARK_STORE === 'postgres'
      ? postgresStore({ connectionString: env.PARK_STORE_URL! })
      : memoryStore({ now });
let broken = true;

const board = svcBoardWebhook({
  secret: env.PARK_SECRET!,
  store,
  now,
  logger: false,
  ...(env.PARK_SCHEMA === 'park' ? { schemaPolicy: 'park' as const } : {}),
}).on('task.created', (event) => {
  if (broken) throw new Error('the handler is broken');
  process.stdout.write(`ran ${event.id}\n`);
});
const webhook = createNodeHandler(board);

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const answer = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  if (url.pathname === '/clock') {
    clock.now = Number(url.searchParams.get('ms'));
    return answer(200, { now: clock.now });
  }
  if (url.pathname === '/fix') {
    broken = false;
    return answer(200, { fixed: true });
  }
  if (url.pathname === '/replay') {
    board.parked.replay(url.searchParams.get('id')!).then(
      (result) => answer(200, result),
      (err: { code?: string; status?: number }) => answer(err.status ?? 500, { code: err.code }),
    );
    return undefined;
  }
  return webhook(req, res);
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`));
