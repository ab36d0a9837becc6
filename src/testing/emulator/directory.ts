import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { FakeSvcError } from './emulator-error';
import { bearerOf, botIdOf } from './rules';

/** A board of the emulated svc. `plan` is its workspace's plan: board webhooks need `business`. */
export interface EmulatedBoard {
  readonly id: string;
  readonly key: string;
  readonly name: string;
  readonly workspaceId: string;
  plan: 'business' | 'free';
}

/** A bot user and the token it calls the bot webhook routes with. */
export interface EmulatedBot {
  readonly id: string;
  /** `svc_bot_<id>_<43 characters>`: the only copy; the emulator keeps a hash, as svc does. */
  readonly token: string;
}

/** A person with MANAGE_BOARD on `boards` (and MANAGE_INTEGRATIONS), and the token they call with. */
export interface EmulatedPerson {
  /** An opaque token; the emulator keeps a hash of it. */
  readonly token: string;
  readonly boards: readonly string[];
}

/** Who a request's token belongs to, or why it is refused (401: unknown or malformed token). */
export type Caller = { kind: 'bot'; botId: string } | { kind: 'person'; boards: ReadonlySet<string> } | { kind: 'refused'; reason: string };

const hash = (token: string): string => createHash('sha256').update(token).digest('hex');
const rand43 = (): string => randomBytes(32).toString('base64url');

/** The boards, bots and people of one emulator, with the token hashes it authenticates against. */
export class Directory {
  readonly boards = new Map<string, EmulatedBoard>();
  readonly #bots = new Map<string, string>();
  readonly #people = new Map<string, Set<string>>();

  /** A new board on the Business plan, managed by `managers` (people made earlier). */
  addBoard(input: { key?: string; name?: string; workspaceId?: string; managers?: readonly EmulatedPerson[] } = {}): EmulatedBoard {
    const key = input.key ?? `B${this.boards.size + 1}`;
    if (!/^[A-Z][A-Z0-9]{0,9}$/.test(key)) throw new FakeSvcError('invalid_input', 'a board key is 1 to 10 capital letters or digits, starting with a letter');
    const board: EmulatedBoard = {
      id: randomUUID(),
      key,
      name: input.name ?? `Board ${key}`,
      workspaceId: input.workspaceId ?? randomUUID(),
      plan: 'business',
    };
    for (const person of input.managers ?? []) {
      const boards = this.#people.get(hash(person.token));
      if (boards === undefined) throw new FakeSvcError('not_found', 'a manager of the new board is no person of this emulator');
      boards.add(board.id);
    }
    this.boards.set(board.id, board);
    return board;
  }

  /** A new bot user with a fresh bot token. */
  addBot(): EmulatedBot {
    const id = randomUUID();
    const token = `svc_bot_${id}_${rand43()}`;
    this.#bots.set(id, hash(token));
    return { id, token };
  }

  /** A new person who manages `boards`. */
  addPerson(boards: readonly string[]): EmulatedPerson {
    for (const id of boards) this.board(id);
    const token = `person_${rand43()}`;
    this.#people.set(hash(token), new Set(boards));
    return { token, boards: [...boards] };
  }

  /** The board `id`, or a `not_found` error. */
  board(id: string): EmulatedBoard {
    const board = this.boards.get(id);
    if (board === undefined) throw new FakeSvcError('not_found', `no board ${JSON.stringify(id)}`);
    return board;
  }

  /** Forgets `token`, so it authenticates no more; the bot or person stays (a bot gets no new token here). */
  revoke(token: string): void {
    const botId = botIdOf(token);
    if (botId !== undefined && this.#bots.get(botId) === hash(token)) this.#bots.set(botId, 'revoked');
    this.#people.delete(hash(token));
  }

  /** The ids of every bot. */
  botIds(): string[] {
    return [...this.#bots.keys()];
  }

  /** Whether `id` is a bot of this emulator. */
  hasBot(id: string): boolean {
    return this.#bots.has(id);
  }

  /** Who sent `authorization`: the bot found by the id in its token, then the whole token checked; or a person. */
  caller(authorization: string | undefined): Caller {
    const token = bearerOf(authorization);
    if (token === undefined) return { kind: 'refused', reason: 'an Authorization: Bearer token is required' };
    if (token.startsWith('svc_bot_')) {
      const botId = botIdOf(token);
      if (botId === undefined) return { kind: 'refused', reason: 'the bot token is malformed' };
      return this.#bots.get(botId) === hash(token) ? { kind: 'bot', botId } : { kind: 'refused', reason: 'the bot token is not valid' };
    }
    const boards = this.#people.get(hash(token));
    return boards === undefined ? { kind: 'refused', reason: 'the token is not valid' } : { kind: 'person', boards };
  }
}
