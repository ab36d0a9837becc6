import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const BOARD_SECRET = 'board-secret-for-tests-0123456789';
export const BOT_SECRET = 'bot-secret-for-tests-0123456789ab';

const FIXTURES = join(__dirname, '..', '..', 'examples', 'fixtures');

export function hmacHex(secret: string, ...parts: Array<string | Buffer>): string {
  const mac = createHmac('sha256', secret);
  for (const p of parts) mac.update(p);
  return mac.digest('hex');
}

export function fixtureNames(webhook: 'board' | 'bot'): string[] {
  return readdirSync(join(FIXTURES, webhook))
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length))
    .sort();
}

/** A fixture as a fresh delivery: its own id (and for bot updates, a current createdAt). */
export function fixture<T = Record<string, any>>(webhook: 'board' | 'bot', name: string, overrides: Record<string, unknown> = {}): T {
  const body = JSON.parse(readFileSync(join(FIXTURES, webhook, `${name}.json`), 'utf8'));
  body.id = randomUUID();
  if (webhook === 'bot') body.createdAt = new Date().toISOString();
  return { ...body, ...overrides };
}

export interface SignedRequest {
  body: string;
  headers: Record<string, string>;
}

/** Signs a board event as the sender does. */
export function signBoard(event: Record<string, any>, opts: { secret?: string; timestamp?: number; body?: string } = {}): SignedRequest {
  const body = opts.body ?? JSON.stringify(event);
  const timestamp = String(opts.timestamp ?? Math.floor(Date.now() / 1000));
  return {
    body,
    headers: {
      'Content-Type': 'application/json',
      'User-Agent': 'Svc-Webhook/1.0',
      'X-Svc-Webhook-Version': '1',
      'X-Svc-Event': String(event.type),
      'X-Svc-Delivery': String(event.id),
      'X-Svc-Timestamp': timestamp,
      'X-Svc-Signature': `v1=${hmacHex(opts.secret ?? BOARD_SECRET, timestamp, '.', body)}`,
    },
  };
}

/** Signs a bot update as the sender does. */
export function signBot(update: Record<string, any>, opts: { secret?: string; body?: string } = {}): SignedRequest {
  const body = opts.body ?? JSON.stringify(update);
  return {
    body,
    headers: {
      'Content-Type': 'application/json',
      'User-Agent': 'SvcBot-Webhook/1.0',
      'X-Svc-Delivery': String(update.id),
      'X-Svc-Signature': `sha256=${hmacHex(opts.secret ?? BOT_SECRET, body)}`,
    },
  };
}

/** The event moved to board `boardId`, its task with it (`task.board_id`), as svc sends a board's events. */
export function onBoard<E extends Record<string, any>>(event: E, boardId: string): E {
  const moved: Record<string, any> = { ...event, board: { ...event.board, id: boardId } };
  if (typeof event.task === 'object' && event.task !== null && typeof event.task.board_id === 'string' && event.task.board_id !== '')
    moved.task = { ...event.task, board_id: boardId };
  return moved as E;
}
