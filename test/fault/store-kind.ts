import type { DeliveryContext, DeliveryStore } from '../../src';

/** What the store holds for a delivery id at the end of the run. */
export type KeyState = 'done' | 'claimed' | 'absent';

/**
 * A store server run by the fault test: a real server process on a free loopback port, with durable
 * data, that the test can freeze, kill and restart.
 */
export interface StoreServer {
  /** The pid of the server process now running. */
  readonly pid: number;
  /** How the server keeps its data, for the summary (e.g. "AOF, appendfsync always"). */
  readonly durability: string;
  /** What a receiver process needs in its environment to open the store (read by `StoreKind.open`). */
  readonly receiverEnv: Readonly<Record<string, string>>;
  /** SIGSTOP: the server keeps its connections and answers nothing. */
  freeze(): void;
  /** SIGCONT after `freeze`. */
  thaw(): void;
  /** SIGKILL, and waits for the process to end. */
  kill(): Promise<void>;
  /** Starts the server again on the same port, from its durable data. */
  restart(): Promise<void>;
  /** The state of each (canonical) delivery id. */
  states(ids: readonly string[]): Promise<Map<string, KeyState>>;
  /**
   * For a store whose handlers write their side effect in the store's own database: how many effect
   * rows each delivery id has. Every delivery must have exactly one.
   */
  effectRows?(ids: readonly string[]): Promise<Map<string, number>>;
  /** Ends the server by its pid and removes its data. */
  close(): Promise<void>;
}

/**
 * One store under test: how to run its server (in the test) and how to open it (in a receiver).
 * A new store joins the fault test as one more `StoreKind` in stores/, listed in stores/index.ts;
 * `npm run test:fault -- <name>` runs only it.
 */
export interface StoreKind {
  readonly name: string;
  /** Starts a server with its data under `dir`. Fails, with how to install it, when the server is missing. */
  start(dir: string): Promise<StoreServer>;
  /** In a receiver process: the store, from the variables `StoreServer.receiverEnv` set. */
  open(env: NodeJS.ProcessEnv): DeliveryStore;
  /**
   * In a receiver process: the handler's side effect, for a store that makes it transactional.
   * `record` writes the effect line once the effect is written (not yet committed); `linger` is the
   * handler's work after it, done inside the transaction. Without it the effect is the line alone.
   */
  effect?(ctx: DeliveryContext, record: () => void, linger: () => Promise<void>): Promise<void>;
}
