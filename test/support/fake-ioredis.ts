/**
 * The one scripted ioredis of the unit tests. `Redis` stands in for the package's client class
 * (`jest.mock('ioredis', () => jest.requireActual('../../support/fake-ioredis'))`) and records the
 * url and options each client was made with (`Cluster`, the seed nodes and options of a cluster's); `scriptedClient` is a connected client whose every
 * command (`call`) and script (`eval`) is recorded and answered by the test. What Redis does with
 * the commands runs against a real redis-server in test/redis/.
 */

/** One command or script as the client received it: its name (or the script), then its arguments. */
export type Call = Array<string | number>;

/** A client made by the library from a URL, as `new Redis(url, options)`. */
export class Redis {
  static made: Redis[] = [];
  /** How a made client's `quit` ends. */
  static quitFails = false;
  readonly on = jest.fn();
  readonly call = jest.fn((..._args: Call) => Promise.resolve(null as unknown));
  readonly quit = jest.fn(() => (Redis.quitFails ? Promise.reject(new Error('already closed')) : Promise.resolve('OK')));
  readonly disconnect = jest.fn();

  constructor(
    readonly url: string,
    readonly options: Record<string, any>,
  ) {
    Redis.made.push(this);
  }
}

/** A Redis Cluster client made by the library from seed nodes, as `new Cluster(nodes, options)`. */
export class Cluster {
  static made: Cluster[] = [];
  readonly isCluster = true;
  readonly on = jest.fn();
  readonly call = jest.fn((..._args: Call) => Promise.resolve(null as unknown));
  readonly quit = jest.fn(() => Promise.resolve('OK'));
  readonly disconnect = jest.fn();

  constructor(
    readonly nodes: Array<{ host: string; port: number }>,
    readonly options: Record<string, any>,
  ) {
    Cluster.made.push(this);
  }
}

/** Forgets the clients made, and makes `quit` succeed again. */
export function resetIoredis(): void {
  Redis.made.length = 0;
  Redis.quitFails = false;
  Cluster.made.length = 0;
}

/**
 * A connected client: each `call(command, ...args)` and `eval(script, numKeys, ...args)` is
 * recorded in `calls` and answered by `answer`. It can be made to reconnect: `status` is then not
 * 'ready' until `becomeReady()`.
 */
export function scriptedClient(answer: (call: Call) => Promise<unknown> = () => Promise.resolve('OK')) {
  const calls: Call[] = [];
  const readyListeners: Array<() => void> = [];
  const send = (call: Call) => {
    calls.push(call);
    return answer(call);
  };
  const client = {
    status: 'ready' as string | undefined,
    call: jest.fn((command: string, ...args: Array<string | number>) => send([command, ...args])),
    eval: jest.fn((script: string, numKeys: number, ...args: Array<string | number>) => send([script, numKeys, ...args])),
    once: jest.fn((_event: 'ready', listener: () => void) => void readyListeners.push(listener)),
    quit: jest.fn(() => Promise.resolve('OK')),
    disconnect: jest.fn(),
  };
  const becomeReady = () => {
    client.status = 'ready';
    for (const listener of readyListeners.splice(0)) listener();
  };
  return { client, calls, becomeReady };
}
