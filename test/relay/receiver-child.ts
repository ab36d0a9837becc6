import { createServer } from 'node:http';
import { svcBoardWebhook, svcBotWebhook } from '../../src/index';

/**
 * A developer's local receiver, as a child process: svcBoardWebhook and svcBotWebhook with this
 * developer's own development secret (RECEIVER_SECRET). Every delivery they accept is printed as a
 * JSON line with its raw body (RECEIVER_QUIET=1: without it), so the test compares the bytes.
 * RECEIVER_FAIL=1: every handler throws, so the receiver answers 500.
 */
const secret = process.env.RECEIVER_SECRET!;
const fail = process.env.RECEIVER_FAIL === '1';
const quiet = process.env.RECEIVER_QUIET === '1';
const board = svcBoardWebhook({ secret, logger: false });
const bot = svcBotWebhook({ secret, logger: false });
const handler = (): void => {
  if (fail) throw new Error('failing on purpose');
};
board.onAny(handler);
bot.onAny(handler);

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const webhook = req.url === '/webhooks/bot' ? bot : board;
    void webhook.receive({ body, headers: req.headers as Record<string, string>, url: req.url ?? '/', method: req.method ?? 'POST' }).then((answer) => {
      if (answer.status >= 200 && answer.status < 300) {
        process.stdout.write(
          `${JSON.stringify({ id: req.headers['x-svc-delivery'], body: quiet ? '' : body.toString('base64'), duplicate: answer.body.includes('duplicate'), path: req.url })}\n`,
        );
      }
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body);
    });
  });
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`listening ${port}\n`);
});
