import type { VersionInfo } from '../../client/setup-types';
import type { ApiFault } from './api-faults';
import type { ApiRequest, ApiTrafficOptions } from './api-traffic';
import type { Audit } from './audit';
import type { ChaosOptions } from './chaos';
import type { EmulatedBoard, EmulatedBot, EmulatedPerson } from './directory';
import type { BoardEmit, BotEmit, EmittedBoardType } from './emitted-events';
import type { Emitted } from './emulator-core';
import type { BoardWebhookView, BotWebhookView, StateTimeFormat } from './webhook-record';

/** Options of `createFakeSvc`; each is checked once, when the emulator is made. */
export interface FakeSvcOptions extends ApiTrafficOptions {
  /** The address to listen on; default `127.0.0.1` (this machine only). */
  host?: string;
  /** The port; default 0 (any free port). */
  port?: number;
  /**
   * `manual`: time stands still until `advance(ms)` moves it, so a day of retries runs in seconds.
   * `real` (the default): time is the machine's.
   */
  clock?: 'manual' | 'real';
  /**
   * Where the manual clock starts, in ms since the epoch; default now. Start it in the past and
   * `advance` to now, for a state that began a while ago (`failingSince` an hour back) as a
   * client reading it against its own clock sees it.
   */
  startAt?: number;
  /**
   * Accept webhook urls on this machine (`http://127.0.0.1:…`, `https://localhost/…`), which svc
   * refuses. Default false; other private addresses stay refused either way.
   */
  allowLoopback?: boolean;
  /**
   * Maps a registered origin to where deliveries really go, as a tunnel would:
   * `{ 'https://hooks.example.com': 'http://127.0.0.1:3000' }`. Path and query are kept.
   */
  forward?: Record<string, string>;
  /**
   * Hosts deliveries may be sent to, after `forward`; `loopback` stands for this machine. Default
   * `['loopback']`: a delivery to any other host fails (`lastError` says so) and nothing is sent.
   */
  allowedHosts?: string[];
  /** Delivery faults svc is allowed to show; all off by default. */
  chaos?: ChaosOptions;
  /** Whether GET /api/bots/me/webhook wraps the state in `webhook`, as PUT does (the spec leaves it open). Default true. */
  botGetWrapped?: boolean;
  /**
   * How many deliveries, and how many attempts, the audit keeps; the oldest go first, so a
   * long-running emulator's memory stays bounded. Default 100000.
   */
  maxAuditEntries?: number;
  /** Fields of GET /api/version over the default (`version: 'dev'`, `commit: 'unknown'`, as a local build of svc answers). */
  versionInfo?: Partial<VersionInfo>;
}

/** A running svc emulator: svc's webhook routes over HTTP, and a control API for the test. */
export interface FakeSvc {
  /** `http://host:port`: svc's `{base_url}`, for `new SvcClient({ baseUrl })`. */
  readonly baseUrl: string;
  /** The board made at start (Business plan). */
  readonly board: EmulatedBoard;
  /** The person made at start, who manages `board`. */
  readonly person: EmulatedPerson;
  /** The bot made at start. */
  readonly bot: EmulatedBot;
  /** Whether the clock is the manual one. */
  readonly manualClock: boolean;
  /** What was sent and answered, and the assertions on it. */
  readonly audit: Audit;
  /**
   * A new board on the Business plan, in a workspace of its own unless `workspaceId` names one,
   * managed by `managers` (such as `svc.person`) besides the people `addPerson` makes for it.
   */
  addBoard(input?: { key?: string; name?: string; workspaceId?: string; managers?: readonly EmulatedPerson[] }): EmulatedBoard;
  /** A new bot and its token. */
  addBot(): EmulatedBot;
  /** A new person who manages `boardIds`. */
  addPerson(boardIds: readonly string[]): EmulatedPerson;
  /** Every board. */
  boards(): EmulatedBoard[];
  /** The ids of every bot. */
  bots(): string[];
  /** A change on a board (default the start board): the next `sequence`, queued unless svc would not. */
  emitBoardEvent<T extends EmittedBoardType>(input: BoardEmit<T> & { boardId?: string }): Emitted;
  /** An event for a bot (default the start bot), queued on its webhook unless svc would not. */
  emitBotUpdate(input: BotEmit & { botId?: string }): Emitted;
  /** The plan of a board's workspace (default the start board's): `free` pauses its board webhooks, `business` resumes them. */
  setPlan(plan: 'business' | 'free', boardId?: string): void;
  /** The state svc's GET answers for a board's (by id) or the bot's webhook; undefined when there is none. */
  webhook(owner: { boardId: string }): BoardWebhookView | undefined;
  /** The state svc's GET answers for a bot's webhook; undefined when there is none. */
  webhook(owner: { botId: string }): BotWebhookView | undefined;
  /** Manual clock: moves time by `ms`, running every attempt due in order; resolves once they were answered. */
  advance(ms: number): Promise<void>;
  /** The emulator's time, in ms since the epoch. */
  now(): number;
  /** Resolves once no delivery is ready or in flight (later retries do not count). */
  settled(): Promise<void>;
  /** Every request made to svc's routes so far, in order (the control routes are not in it). */
  requests(): ApiRequest[];
  /**
   * Whether the webhook of a board or bot holds `secret` (compared in constant time): what a test
   * checks instead of reading the secret, which svc never shows.
   */
  secretMatches(owner: { boardId: string } | { botId: string }, secret: string): boolean;
  /**
   * Makes svc's webhook routes misbehave (an outage, a rate limit, an unreadable answer) for a
   * client's tests; the function returned removes the fault.
   */
  injectApiFault(fault: ApiFault): () => void;
  /** How GET writes the state's timestamps from now on (the spec does not show a format); default `iso`. */
  setStateTimeFormat(format: StateTimeFormat): void;
  /** Revokes a token this emulator issued: svc answers 401 to it from now on. */
  revokeToken(token: string): void;
  /** Stops the server and every timer. */
  close(): Promise<void>;
}
