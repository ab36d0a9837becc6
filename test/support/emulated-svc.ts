/**
 * svc as the tests of the watcher's clients (status, reenable, the example server) find it: the
 * emulator with `boards` boards the start person manages, each with its webhook set at a public
 * url, and the bot webhook set. Deliveries to those urls are forwarded to `forwardTo`, or to a sink
 * of its own that answers `sink.status`. The manual clock starts three days back, so a state can
 * begin in the past as the clients (which read their own clock) see it.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createFakeSvc, type ApiRequest, type FakeSvc, type FakeSvcOptions } from '../../src/testing';

const DAY_MS = 24 * 60 * 60 * 1000;
const SETUP = 'x-test-setup';

export const HOOKS_ORIGIN = 'https://hooks.example.com';
/** The header that marks this helper's own requests. */
export const SETUP_HEADER = SETUP;
export const boardUrl = (boardId: string): string => `${HOOKS_ORIGIN}/webhooks/board?board=${boardId}`;
export const BOT_URL = `${HOOKS_ORIGIN}/webhooks/bot`;

export interface EmulatedSvc {
  readonly svc: FakeSvc;
  readonly boardIds: string[];
  /** Each board's webhook secret. */
  readonly secrets: Map<string, string>;
  readonly botSecret: string;
  /** The status and body the sink answers (when no `forwardTo` was given); svc quotes the body in lastError. */
  readonly sink: { status: number; body: string };
  /** The requests clients made to svc's routes, without this helper's own. */
  requests(): ApiRequest[];
  /** Moves svc's clock to the present. */
  catchUp(): Promise<void>;
  /**
   * The board's deliveries fail for `agoMs` (an event emitted, the sink answering `status`): up to
   * now when svc's clock allows, else from svc's present on (its clock then runs ahead of ours).
   */
  failSince(boardId: string, agoMs: number, status?: number): Promise<void>;
  /** Deletes the board's webhook through svc's route. */
  deleteWebhook(boardId: string): Promise<void>;
  close(): Promise<void>;
}

/** A PUT of the setup, marked so that `requests()` leaves it out. */
export async function put(svc: FakeSvc, path: string, token: string, body: unknown): Promise<void> {
  for (;;) {
    const res = await fetch(`${svc.baseUrl}${path}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, [SETUP]: '1' },
      body: JSON.stringify(body),
    });
    // An emulator made with an API rate limit applies it to the setup too: wait as it asks.
    if (res.status === 429) await new Promise((resolve) => setTimeout(resolve, Number(res.headers.get('retry-after') ?? 1) * 1000));
    else if (res.status === 200) return;
    else throw new Error(`setting up ${path} answered ${res.status}`);
  }
}

export async function emulatedSvc(setup: { boards: number; forwardTo?: string; boardSecret?: string; options?: FakeSvcOptions }): Promise<EmulatedSvc> {
  const sink = { status: 500, body: '' };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(sink.status).end(sink.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const local = setup.forwardTo ?? `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const svc = await createFakeSvc({ clock: 'manual', startAt: Date.now() - 3 * DAY_MS, forward: { [HOOKS_ORIGIN]: local }, ...setup.options });
  const boardIds = [svc.board.id, ...Array.from({ length: Math.max(0, setup.boards - 1) }, () => svc.addBoard({ managers: [svc.person] }).id)].slice(
    0,
    setup.boards,
  );
  const secrets = new Map(boardIds.map((id) => [id, setup.boardSecret ?? `board-secret-${randomBytes(12).toString('hex')}`]));
  for (const id of boardIds) await put(svc, `/api/boards/${id}/webhook`, svc.person.token, { url: boardUrl(id), secret: secrets.get(id) });
  const botSecret = `bot-secret-${randomBytes(12).toString('hex')}`;
  await put(svc, '/api/bots/me/webhook', svc.bot.token, { url: BOT_URL, secret: botSecret });
  const catchUp = () => svc.advance(Math.max(0, Date.now() - svc.now()));

  return {
    svc,
    boardIds,
    secrets,
    botSecret,
    sink,
    requests: () => svc.requests().filter((r) => r.headers[SETUP] === undefined),
    catchUp,
    async failSince(boardId, agoMs, status = 500) {
      // From `agoMs` before now, or from svc's present if its clock is already past that.
      await svc.advance(Math.max(0, Date.now() - agoMs - svc.now()));
      sink.status = status;
      svc.emitBoardEvent({ type: 'task.updated', boardId });
      await svc.advance(agoMs);
    },
    async deleteWebhook(boardId) {
      await fetch(`${svc.baseUrl}/api/boards/${boardId}/webhook`, { method: 'DELETE', headers: { authorization: `Bearer ${svc.person.token}`, [SETUP]: '1' } });
    },
    async close() {
      await svc.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
