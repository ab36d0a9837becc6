/**
 * A receiver built from the library itself (svcBoardWebhook and svcBotWebhook behind node:http on
 * loopback), so the emulator's signatures are checked by the code users run. It records what its
 * handlers ran for, and can be told to answer otherwise (a status, a redirect, silence).
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeHandler, svcBoardWebhook, svcBotWebhook } from '../../src';
import { silentLogger } from '../../src/testing';

export const BOARD_SECRET = 'emulator-board-secret-0123456789';
export const BOT_SECRET = 'emulator-bot-secret-0123456789ab';

/** What the receiver answers instead of passing to the library: a status (with Location for 3xx), or no answer. */
export type Override = { status: number } | 'hang';

export interface TestReceiver {
  readonly url: string;
  readonly boardUrl: string;
  readonly botUrl: string;
  /** Board deliveries the handler ran, in order: id and sequence. */
  readonly board: Array<{ id: string; sequence: number; type: string }>;
  /** The board events the handler ran for, whole. */
  readonly boardEvents: Array<Record<string, unknown>>;
  /** Bot deliveries the handler ran, in order. */
  readonly bot: string[];
  /** Every request that reached the server, with its headers. */
  readonly requests: Array<{ path: string; headers: Record<string, string | string[] | undefined> }>;
  /** Set or clear the override. */
  answer(override: Override | undefined): void;
  close(): Promise<void>;
}

export async function startReceiver(secrets: { board?: string; bot?: string } = {}): Promise<TestReceiver> {
  const board: TestReceiver['board'] = [];
  const boardEvents: Array<Record<string, unknown>> = [];
  const bot: string[] = [];
  const requests: TestReceiver['requests'] = [];
  const hung = new Set<ServerResponse>();
  let override: Override | undefined;
  const boardHook = svcBoardWebhook({ secret: secrets.board ?? BOARD_SECRET, logger: silentLogger }).onAny((event) => {
    board.push({ id: event.id, sequence: event.sequence, type: event.type });
    boardEvents.push(event as unknown as Record<string, unknown>);
  });
  const botHook = svcBotWebhook({ secret: secrets.bot ?? BOT_SECRET, logger: silentLogger }).onAny((_data, ctx) => void bot.push(ctx.deliveryId));
  const handler = createNodeHandler(boardHook, createNodeHandler(botHook));
  const server: Server = createServer((req, res) => {
    requests.push({ path: req.url ?? '', headers: req.headers });
    if (override === 'hang') {
      hung.add(res);
      return;
    }
    if (override !== undefined) {
      res.writeHead(override.status, override.status >= 300 && override.status < 400 ? { location: 'http://127.0.0.1:1/elsewhere' } : {});
      res.end();
      return;
    }
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    boardUrl: `${url}${boardHook.path}`,
    botUrl: `${url}${botHook.path}`,
    board,
    boardEvents,
    bot,
    requests,
    answer: (next) => void (override = next),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hung) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
