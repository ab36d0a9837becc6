/**
 * `npm start -- --emulate`: the example server fed by svc's emulator (`createFakeSvc` of
 * svc-webhooks/testing), in this process and on this machine. The server's two webhooks are set
 * through svc's setup routes with the server's own secrets; svc sends an event every two seconds
 * (repeating one now and then and shuffling a few, as svc may); the watcher reads what svc
 * reports. svc's clock runs a minute per second, so a failed delivery's retry comes a second or
 * two later. Nothing is sent beyond this machine, and no token is printed.
 */
import type { Logger } from 'pino';
import { SvcClient } from '../src/client';
import { createFakeSvc } from '../src/testing';

/** The public origin the webhooks are registered at; the emulator forwards it to the server. */
const PUBLIC_ORIGIN = 'https://hooks.example.com';
const BOARD_TYPES = ['task.created', 'task.updated', 'task.comment.created', 'task.updated', 'task.archived'] as const;
const TICK_MS = 1000;
const SVC_MS_PER_TICK = 60_000;

/** What the server needs of the emulated svc: the environment its watcher reads, and a way to stop it. */
export interface Emulation {
  readonly env: Record<string, string>;
  close(): Promise<void>;
}

/** Starts the emulated svc, registers the server (at `base`) with it, and sets events flowing. */
export async function emulateSvc(
  base: string,
  webhooks: { boardPath: string; botPath: string; boardSecret: string; botSecret: string },
  logger: Logger,
): Promise<Emulation> {
  // It may run for hours: no request log, and a bounded audit.
  const svc = await createFakeSvc({
    clock: 'manual',
    forward: { [PUBLIC_ORIGIN]: base },
    chaos: { seed: Date.now() % 0xffffffff, duplicateRate: 0.1, reorderWindow: 3 },
    recordRequests: false,
    maxAuditEntries: 1_000,
  });
  await new SvcClient({ baseUrl: svc.baseUrl, token: svc.person.token }).setBoardWebhook(svc.board.id, {
    url: `${PUBLIC_ORIGIN}${webhooks.boardPath}`,
    secret: webhooks.boardSecret,
  });
  await new SvcClient({ baseUrl: svc.baseUrl, token: svc.bot.token }).setBotWebhook({ url: `${PUBLIC_ORIGIN}${webhooks.botPath}`, secret: webhooks.botSecret });
  let tick = 0;
  const timer = setInterval(() => {
    tick += 1;
    if (tick % 2 === 1) {
      if (tick % 8 === 7) svc.emitBotUpdate({ kind: 'messageCreate', data: { message: { content: 'hello from the emulated svc' } } });
      else svc.emitBoardEvent({ type: BOARD_TYPES[Math.floor(tick / 2) % BOARD_TYPES.length]! });
    }
    svc.advance(SVC_MS_PER_TICK).catch((err: unknown) => logger.warn({ err }, 'the emulated svc stopped'));
  }, TICK_MS);
  logger.info({ svc: svc.baseUrl, board: svc.board.id }, 'emulated svc: the webhooks are set, an event every 2 s');
  return {
    env: {
      SVC_BASE_URL: svc.baseUrl,
      SVC_TOKEN: svc.person.token,
      SVC_WATCH_BOARDS: svc.board.id,
      SVC_BOT_TOKEN: svc.bot.token,
      SVC_WATCH_INTERVAL_MS: '5000',
    },
    async close() {
      clearInterval(timer);
      await svc.close();
    },
  };
}
