import { randomUUID } from 'node:crypto';
import type { BoardEventMap, BoardEventType } from '../generated/board-types';
import type { BotEventMap, BotWebhookUpdate, MessageCreateData } from '../generated/bot-types';
import { boardFixtures, botFixtures, type BoardFixtureName, type BotFixtureName } from './generated/fixtures';
import { mergeOverrides, type DeepPartial } from './merge-overrides';

/** A bot update whose `event` holds the member `K`. */
export type BotUpdateOf<K extends keyof BotEventMap> = BotWebhookUpdate & { event: { [P in K]: BotEventMap[P] } };

/** The envelope fields of a bot update that a test may pin. */
export type BotEnvelopeOverrides = Partial<Pick<BotWebhookUpdate, 'id' | 'botUserId' | 'createdAt'>>;

/** The board event types and bot event kinds there is an example of. */
export const exampleBoardTypes = Object.keys(boardFixtures) as BoardFixtureName[];
/** The bot event kinds there is an example of. */
export const exampleBotKinds = (Object.keys(botFixtures) as BotFixtureName[]).filter((name) => !name.includes('.')) as Array<keyof BotEventMap>;

function fixture(table: Readonly<Record<string, unknown>>, name: string, what: string): Record<string, unknown> {
  if (!Object.prototype.hasOwnProperty.call(table, name)) {
    throw new TypeError(`svc-webhooks/testing: no example ${what} "${name}"; known: ${Object.keys(table).join(', ')}`);
  }
  // A deep copy: a test that changes its event must not change the next test's.
  return structuredClone(table[name]) as Record<string, unknown>;
}

/**
 * Gives a delivery a new identity as svc does for every new event: a fresh UUID `id`, and for a
 * bot update `createdAt` = now (so the receiver's replay window never refuses it).
 */
export function freshenDelivery(payload: Record<string, unknown>, webhook: 'board' | 'bot'): Record<string, unknown> {
  payload.id = randomUUID();
  if (webhook === 'bot') payload.createdAt = new Date().toISOString();
  return payload;
}

/**
 * The example named `name` (a board event type, a bot event kind, or `messageCreate.command`)
 * as a fresh delivery, with the webhook it belongs to; undefined when there is no such example.
 */
export function exampleByName(name: string): { webhook: 'board' | 'bot'; payload: Record<string, unknown> } | undefined {
  for (const [webhook, table] of [
    ['board', boardFixtures as Readonly<Record<string, unknown>>],
    ['bot', botFixtures as Readonly<Record<string, unknown>>],
  ] as const) {
    if (Object.prototype.hasOwnProperty.call(table, name)) return { webhook, payload: freshenDelivery(fixture(table, name, 'event'), webhook) };
  }
  return undefined;
}

/** Every example name `exampleByName` knows. */
export const exampleNames: readonly string[] = [...Object.keys(boardFixtures), ...Object.keys(botFixtures)];

/**
 * A valid board event of `type`, from the fixtures, with a fresh delivery id and `overrides`
 * merged in: `boardEvent('task.created', { task: { title: 'Ship it' } })`.
 */
export function boardEvent<T extends BoardEventType>(type: T, overrides?: DeepPartial<BoardEventMap[T]>): BoardEventMap[T] {
  const event = freshenDelivery(fixture(boardFixtures, type, 'board event type'), 'board');
  return onOwnBoard(mergeOverrides(event, overrides), overrides) as unknown as BoardEventMap[T];
}

/**
 * An event moved to another board (or workspace) by `overrides` keeps its task on that board, as
 * svc sends it (and as the receiver checks): `task.board_id`, the key's prefix and the task's
 * workspace follow, unless the overrides name them too.
 */
export function onOwnBoard(event: Record<string, unknown>, overrides: unknown): Record<string, unknown> {
  const given = (overrides ?? {}) as { board?: { id?: unknown; key?: unknown }; workspace_id?: unknown; task?: Record<string, unknown> };
  const board = event.board as { id?: unknown; key?: unknown } | null;
  const task = event.task as Record<string, unknown> | null;
  if (typeof task !== 'object' || task === null || typeof board !== 'object' || board === null) return event;
  const own = (field: string) => given.task === undefined || !Object.prototype.hasOwnProperty.call(given.task, field);
  if (given.board?.id !== undefined && own('board_id') && typeof task.board_id === 'string' && task.board_id !== '') task.board_id = board.id;
  if (given.board?.key !== undefined && own('key') && typeof task.key === 'string')
    task.key = `${String(board.key)}-${task.key.slice(task.key.lastIndexOf('-') + 1)}`;
  if (given.workspace_id !== undefined && own('workspace_id') && typeof task.workspace_id === 'string' && task.workspace_id !== '')
    task.workspace_id = event.workspace_id;
  return event;
}

function update(name: string, kind: string, data: unknown, envelope: BotEnvelopeOverrides | undefined): Record<string, unknown> {
  const value = freshenDelivery(fixture(botFixtures, name, 'bot event kind'), 'bot');
  mergeOverrides((value.event as Record<string, unknown>)[kind], data);
  return mergeOverrides(value, envelope);
}

/**
 * A valid bot update of `kind`, from the fixtures, with a fresh id and `createdAt` = now.
 * `data` is merged into `update.event[kind]`; `envelope` pins id, botUserId or createdAt.
 */
export function botUpdate<K extends keyof BotEventMap>(kind: K, data?: DeepPartial<BotEventMap[K]>, envelope?: BotEnvelopeOverrides): BotUpdateOf<K> {
  return update(kind, kind, data, envelope) as unknown as BotUpdateOf<K>;
}

/**
 * A `messageCreate` update carrying the command `/name args`, addressed to the update's bot:
 * `botCommand('deploy', 'staging')`.
 */
export function botCommand(name: string, args = '', data?: DeepPartial<MessageCreateData>, envelope?: BotEnvelopeOverrides): BotUpdateOf<'messageCreate'> {
  const value = update('messageCreate.command', 'messageCreate', undefined, envelope) as unknown as BotUpdateOf<'messageCreate'>;
  const message = value.event.messageCreate.message;
  message.content = `/${name}${args === '' ? '' : ` ${args}`}`;
  message.command = { botUserId: value.botUserId, name, args };
  mergeOverrides(value.event.messageCreate, data);
  return value;
}
