import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';

/**
 * A REST front for a real redis-server, speaking the Upstash REST protocol as far as the Redis REST
 * store uses it: POST / with a command as a JSON array and `Authorization: Bearer <token>`, answered
 * `{"result": …}`, or `{"error": "…"}` with 400 (401 for a wrong token). On 127.0.0.1 only.
 * `stall()` makes it take requests and answer none, as an overloaded server does.
 */
export class RedisRestFront {
  private stalled = false;
  readonly requests: string[][] = [];

  private constructor(
    private readonly server: Server,
    private readonly redis: Redis,
    private readonly token: string,
  ) {}

  static async start(redisUrl: string, token: string): Promise<RedisRestFront> {
    const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    let front: RedisRestFront | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on(
        'end',
        () =>
          void front!.answer(req.method, req.headers.authorization, Buffer.concat(chunks).toString('utf8'), (status, body) =>
            res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body)),
          ),
      );
    });
    front = new RedisRestFront(server, redis, token);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return front;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stall(on = true): void {
    this.stalled = on;
  }

  private async answer(
    method: string | undefined,
    authorization: string | undefined,
    body: string,
    send: (status: number, body: object) => void,
  ): Promise<void> {
    if (this.stalled) return;
    if (authorization !== `Bearer ${this.token}`) return send(401, { error: 'Unauthorized' });
    let command: unknown;
    try {
      command = JSON.parse(body);
    } catch {
      command = undefined;
    }
    if (method !== 'POST' || !Array.isArray(command) || command.length === 0 || !command.every((part) => typeof part === 'string'))
      return send(400, { error: 'ERR a command is a JSON array of strings' });
    this.requests.push(command as string[]);
    try {
      const [name, ...args] = command as string[];
      send(200, { result: await this.redis.call(name!, ...args) });
    } catch (err) {
      send(400, { error: err instanceof Error ? err.message : String(err) });
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.redis.disconnect();
  }
}
