import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createNodeHandler, svcBoardWebhook, type BoardWebhookMiddleware, type LoggerLike } from '../../src';
import { SvcClient } from '../../src/client';
import { watchWebhooks } from '../../src/watch';
import { expressVersions } from '../support/apps';
import { EmulatedWebhooks } from '../watch/emulated-webhooks';
import { BOARD_SECRET, fixture, signBoard } from '../support/sign';
import { until } from '../watch/harness';

type Level = 'debug' | 'info' | 'warn' | 'error';

/** A console-like logger whose `throwing` levels throw; every call is counted. */
function throwingLogger(...throwing: Level[]): LoggerLike & { calls: Record<Level, number> } {
  const calls = { debug: 0, info: 0, warn: 0, error: 0 };
  const method = (level: Level) => () => {
    calls[level]++;
    if (throwing.includes(level)) throw new Error(`the ${level} transport is down`);
  };
  return { calls, debug: method('debug'), info: method('info'), warn: method('warn'), error: method('error') };
}

/** A pino logger whose destination throws on every line. */
function throwingPino(): pino.Logger {
  return pino(
    { level: 'debug' },
    {
      write: () => {
        throw new Error('the log pipe is closed');
      },
    },
  );
}

/** Starts `listener` on a loopback port; `send` posts to it; `close` ends it. */
async function serve(
  listener: http.RequestListener,
): Promise<{ send: (path: string, body: string, headers: Record<string, string>) => Promise<number>; close: () => Promise<void> }> {
  const server = http.createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    send: async (path, body, headers) => (await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', body, headers })).status,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The process's uncaught exceptions and unhandled rejections while `run` runs, and a moment after. */
async function escaped(run: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const keep = (err: unknown) => void seen.push(err);
  const listeners = { uncaught: process.listeners('uncaughtException'), rejected: process.listeners('unhandledRejection') };
  process.removeAllListeners('uncaughtException').removeAllListeners('unhandledRejection');
  process.on('uncaughtException', keep).on('unhandledRejection', keep);
  try {
    await run();
    await new Promise((r) => setTimeout(r, 50));
  } finally {
    process.off('uncaughtException', keep).off('unhandledRejection', keep);
    for (const l of listeners.uncaught) process.on('uncaughtException', l);
    for (const l of listeners.rejected) process.on('unhandledRejection', l as NodeJS.UnhandledRejectionListener);
  }
  return seen;
}

const UNSIGNED_ON_WRONG_PATH = { 'content-type': 'application/json', 'x-svc-signature': 'v1=anything' };

describe('a logger that throws decides nothing', () => {
  describe('an unsigned POST with an X-Svc-Signature header to a wrong path (the misroute warning throws)', () => {
    it('node:http: answered 404, nothing escapes, and the server answers the next delivery', async () => {
      const logger = throwingLogger('warn');
      const board = svcBoardWebhook({ secret: BOARD_SECRET, logger }).on('task.created', () => undefined);
      const server = await serve(createNodeHandler(board));
      const seen = await escaped(async () => {
        expect(await server.send('/wrong/path', '{}', UNSIGNED_ON_WRONG_PATH)).toBe(404);
      });
      expect(seen).toEqual([]);
      expect(logger.calls.warn).toBe(1);
      const signed = signBoard(fixture('board', 'task.created'));
      expect(await server.send(board.path, signed.body, signed.headers)).toBe(200);
      await server.close();
      await board.close();
    });

    it.each(expressVersions)('%s: answered 404, nothing escapes', async (_name, express) => {
      const logger = throwingLogger('warn');
      const board = svcBoardWebhook({ secret: BOARD_SECRET, logger });
      const app = express();
      app.use(board);
      const server = await serve(app);
      const seen = await escaped(async () => {
        expect(await server.send('/wrong/path', '{}', UNSIGNED_ON_WRONG_PATH)).toBe(404);
      });
      expect(seen).toEqual([]);
      expect(logger.calls.warn).toBe(1);
      await server.close();
      await board.close();
    });
  });

  describe('a delivery whose handlers ran', () => {
    async function deliver(board: BoardWebhookMiddleware): Promise<{ status: number; ran: number }> {
      let ran = 0;
      board.on('task.created', (_event, ctx) => {
        ran++;
        ctx.log.info('the handler logs too');
      });
      const server = await serve(createNodeHandler(board));
      const signed = signBoard(fixture('board', 'task.created'));
      const status = await server.send(board.path, signed.body, signed.headers);
      await server.close();
      await board.close();
      return { status, ran };
    }

    it('is answered 200 when `info` throws on every line (a console-like logger)', async () => {
      const logger = throwingLogger('info', 'debug', 'warn', 'error');
      expect(await deliver(svcBoardWebhook({ secret: BOARD_SECRET, logger }))).toEqual({ status: 200, ran: 1 });
      expect(logger.calls.info).toBeGreaterThanOrEqual(2);
    });

    it('is answered 200 when a pino logger throws on every line', async () => {
      expect(await deliver(svcBoardWebhook({ secret: BOARD_SECRET, logger: throwingPino() }))).toEqual({ status: 200, ran: 1 });
    });
  });

  describe('the webhook watcher', () => {
    let svc: EmulatedWebhooks;
    let watcher: ReturnType<typeof watchWebhooks> | undefined;
    beforeEach(async () => {
      svc = await EmulatedWebhooks.start({ boards: 1 });
    });
    afterEach(async () => {
      await watcher?.close();
      await svc.close();
    });

    it('a throwing first-round `info` line is no unhandled rejection', async () => {
      const logger = throwingLogger('info');
      const seen = await escaped(async () => {
        watcher = watchWebhooks({ client: new SvcClient({ baseUrl: svc.baseUrl, token: svc.personToken }), boards: svc.boardIds, intervalMs: 40, logger });
        await watcher.checked();
        await until(() => logger.calls.info > 0, 'the first-round line');
      });
      expect(seen).toEqual([]);
    });

    it('keeps polling a webhook after its `error` line threw', async () => {
      const logger = throwingLogger('error');
      const states: string[] = [];
      const [board] = svc.boardIds as [string];
      svc.fault(board, { status: 403 });
      watcher = watchWebhooks({
        client: new SvcClient({ baseUrl: svc.baseUrl, token: svc.personToken }),
        boards: svc.boardIds,
        intervalMs: 40,
        logger,
        onChange: (c) => void states.push(c.current.state),
      });
      await until(() => logger.calls.error > 0, 'the error line');
      svc.fault(board, undefined);
      await until(() => states.includes('healthy'), 'the webhook seen healthy again');
      expect(states[0]).toBe('unreachable');
    });
  });
});
