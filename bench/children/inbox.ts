/**
 * A process of the inbox measurements: `receiver` (the board webhook on 127.0.0.1, in inbox or
 * direct mode, with the Redis store), `worker` (runs the handlers of the inbox) or `sender` (the
 * open loop of the time to 2xx, against PORT). It talks to the parent in lines on stdout:
 * `ready [port]`; for a worker `done <ms>` once it has handled EXPECT deliveries (the time from its
 * first handler call to the last one's end) and `warmed` once it has handled WARM_UP_EXPECT warm-up
 * deliveries; for a sender `start` as its open loop starts and `result <json>` at its end; for a receiver, on
 * SIGUSR2, `own <json>`: its own time from a delivery's arrival to its answer (from its delivery
 * records, warm-up deliveries left out); with PHASES=1 the receiver and the sender also give the
 * marks of each delivery (bench/inbox-phases.ts).
 *
 * MODE=floor: the receiver answers as the node floor does (read, verify, JSON.parse, 200), then
 * hands the same request to the inbox-mode webhook, whose answer is dropped: the machine does the
 * inbox's whole work (claim, enqueue, commit, the worker's runs), but after the answer, not before.
 * Its time to 2xx is the least any receiver gets on this machine under that load.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createNodeHandler, redisStore, svcBoardWebhook } from '../../src';
import { traceReceiver } from '../inbox-phases';
import { openLoop, percentile, WARM_UP_BOARD } from '../inbox-traffic';
import { SVC_SECRET } from '../signing';
import { readBody, reply, verifyAndParse } from '../stacks/floor';

const role = process.argv[2];
const env = process.env;

if (role === 'sender') {
  void openLoop(Number(env.PORT), Number(env.RATE), Number(env.SECONDS), Number(env.WARM_UP), () => process.stdout.write('start\n'), env.PHASES === '1').then(
    (figures) => process.stdout.write(`result ${JSON.stringify(figures)}\n`),
  );
} else {
  const url = env.SVC_BENCH_REDIS_URL!;
  const prefix = env.INBOX_PREFIX!;
  const handlerMs = Number(env.HANDLER_MS ?? '0');
  const expected = Number(env.EXPECT ?? '0');
  const warmUpExpected = Number(env.WARM_UP_EXPECT ?? '0');
  const inbox = env.MODE === 'direct' ? undefined : { connection: url, prefix, ordered: env.ORDERED === '1', gapWaitMs: 60_000, keepProcessedMs: 60_000 };
  const store = redisStore({ url, prefix: `${prefix}-ids:` });
  const phases = role === 'receiver' && env.PHASES === '1' ? traceReceiver(store) : undefined;
  const board = svcBoardWebhook({
    secret: SVC_SECRET,
    logger: pino({ level: 'silent' }),
    store,
    // Direct mode: the handler runs in the request, up to the longest deadline allowed.
    timeoutMs: 9000,
    ...(inbox === undefined ? {} : { inbox }),
  });

  let handled = 0;
  let warmed = 0;
  let first = 0;
  board.onAny(async (event) => {
    if (first === 0) first = performance.now();
    const warmUp = (event as { board?: { id?: string } }).board?.id?.startsWith(WARM_UP_BOARD) === true;
    if (handlerMs > 0 && !warmUp) await new Promise((r) => setTimeout(r, handlerMs));
    if (warmUp && ++warmed === warmUpExpected) process.stdout.write('warmed\n');
    if (++handled === expected) process.stdout.write(`done ${performance.now() - first}\n`);
  });

  if (role === 'receiver') {
    const floor = env.MODE === 'floor';
    const own: number[] = [];
    // The floor times its own answer; its webhook's records come after it.
    board.onDelivery((record) => {
      const boardId = (record.payload as { board?: { id?: string } } | undefined)?.board?.id;
      if (!floor && boardId?.startsWith(WARM_UP_BOARD) !== true) own.push(record.durationMs);
    });
    process.on('SIGUSR2', () =>
      process.stdout.write(`own ${JSON.stringify({ p50: percentile(own, 50), p99: percentile(own, 99), count: own.length, phases })}\n`),
    );
    const webhook = createNodeHandler(board);
    const server = createServer(floor ? answerFirst(webhook, own) : webhook);
    server.keepAliveTimeout = 60_000;
    server.listen(0, '127.0.0.1', () => process.stdout.write(`ready ${(server.address() as AddressInfo).port}\n`));
  } else {
    board.work({ concurrency: Number(env.CONCURRENCY ?? '10') });
    process.stdout.write('ready\n');
  }
}

/**
 * The floor's answer, then the webhook's work on the same request: the body read here is left in
 * `req.body` (as express.raw() leaves it), and the webhook's own answer finds the response sent.
 */
function answerFirst(webhook: (req: IncomingMessage, res: ServerResponse) => void, own: number[]) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const arrived = performance.now();
    readBody(req).then(
      (body) => {
        const event = verifyAndParse(req.headers, body) as { board?: { id?: string } } | undefined;
        if (event === undefined) return reply(res, 401, '{}');
        reply(res, 200);
        if (event.board?.id?.startsWith(WARM_UP_BOARD) !== true) own.push(performance.now() - arrived);
        (req as IncomingMessage & { body?: Buffer }).body = body;
        webhook(req, res);
      },
      () => reply(res, 400, '{}'),
    );
  };
}
