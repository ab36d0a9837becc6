/**
 * A board webhook with the `ignore` option behind a node:http server on a free loopback port, for
 * the loop-guard acceptance test. The bot token comes in `TOKEN`, the parts of `ignore` besides
 * `self` in `IGNORE` (JSON). Every line is logged at debug to stdout. Its first line is
 * `{"listening":<port>}`; `GET /handled` answers what the handlers saw: `[{ id, origin }]`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createNodeHandler, svcBoardWebhook } from '../../src';

const handled: Array<{ id: string; origin: string }> = [];
const webhook = svcBoardWebhook({
  secret: process.env.SECRET!,
  logger: pino({ level: 'debug' }),
  ignore: { self: process.env.TOKEN!, ...(JSON.parse(process.env.IGNORE ?? '{}') as object) },
}).onAny((event, ctx) => {
  handled.push({ id: event.id, origin: ctx.origin });
});

const server = createServer(
  createNodeHandler(webhook, (req, res) => {
    res.setHeader('Content-Type', 'application/json');
    res.end(req.url === '/handled' ? JSON.stringify(handled) : '{}');
  }),
);
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ listening: (server.address() as AddressInfo).port })}\n`);
});
