import { randomUUID } from 'node:crypto';
import type { BoardEventMap, BoardEventType } from '../../generated/board-types';
import type { BotEventMap } from '../../generated/bot-types';
import { boardEvent, botUpdate, exampleBoardTypes, exampleBotKinds } from '../example-events';
import { mergeOverrides, type DeepPartial } from '../merge-overrides';
import type { EmulatedBoard } from './directory';
import { FakeSvcError } from './emulator-error';

/** Who made a board change: a person (the default), a bot, an automation rule, or the server itself (auto-archive, Git events). */
export type ChangeAuthor = 'person' | 'bot' | 'rule' | 'server';

/** The board event types a change emits: all but `ping`, which comes from the ping route. */
export type EmittedBoardType = Exclude<BoardEventType, 'ping'>;

/** A board event to emit: its type, overrides merged into the test kit's example, and who made it. */
export interface BoardEmit<T extends EmittedBoardType = EmittedBoardType> {
  type: T;
  /** Fields merged into the example, as `boardEvent(type, overrides)` merges them; `id`, `sequence` and `board` are the emulator's. */
  overrides?: DeepPartial<BoardEventMap[T]>;
  /** Default `person`. */
  by?: ChangeAuthor;
}

/** A bot update to emit: its event kind and data merged into the test kit's example. */
export interface BotEmit {
  kind: keyof BotEventMap;
  /** Merged into `update.event[kind]`. */
  data?: Record<string, unknown>;
}

const AUTHORS: Record<ChangeAuthor, (event: Record<string, unknown>) => void> = {
  person: () => undefined,
  bot: (event) => {
    event.actor = { id: randomUUID(), is_bot: true, name: 'Release bot' };
    event.rule = null;
  },
  rule: (event) => {
    event.actor = null;
    event.rule = { id: randomUUID(), name: 'Move done tasks' };
  },
  server: (event) => {
    event.actor = null;
    event.rule = null;
  },
};

/** The body of a board event as svc sends it for `board`, with the given `sequence`. */
export function boardEventBody(board: EmulatedBoard, input: BoardEmit & { sequence: number }): Record<string, unknown> {
  const type = input.type as string;
  if (type === 'ping' || !exampleBoardTypes.includes(type as never)) {
    throw new FakeSvcError('invalid_input', `no board event type ${JSON.stringify(type)}; known: ${exampleBoardTypes.filter((t) => t !== 'ping').join(', ')}`);
  }
  const author = AUTHORS[input.by ?? 'person'];
  if (author === undefined) throw new FakeSvcError('invalid_input', 'by is person, bot, rule or server');
  const own = { board: { id: board.id, key: board.key, name: board.name }, workspace_id: board.workspaceId };
  const event = boardEvent(input.type, mergeOverrides(structuredClone((input.overrides ?? {}) as Record<string, unknown>), own) as never) as unknown as Record<
    string,
    unknown
  >;
  author(event);
  event.sequence = input.sequence;
  event.occurred_at = new Date().toISOString();
  return event;
}

/** A `ping` event for `board`, from the test kit's example: sequence 0. */
export function pingBody(board: EmulatedBoard): Record<string, unknown> {
  const own = { board: { id: board.id, key: board.key, name: board.name }, workspace_id: board.workspaceId };
  const event = boardEvent('ping', own as never) as unknown as Record<string, unknown>;
  event.sequence = 0;
  event.occurred_at = new Date().toISOString();
  return event;
}

/** The body of a bot update for the bot `botId`. */
export function botUpdateBody(botId: string, input: BotEmit): Record<string, unknown> {
  if (!exampleBotKinds.includes(input.kind)) {
    throw new FakeSvcError('invalid_input', `no bot event kind ${JSON.stringify(input.kind)}; known: ${exampleBotKinds.join(', ')}`);
  }
  const update = botUpdate(input.kind, input.data as never) as unknown as Record<string, unknown>;
  update.botUserId = botId;
  return update;
}
