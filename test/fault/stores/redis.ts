import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { Redis } from 'ioredis';
import { redisStore } from '../../../src';
import { canConnect, freePort, waitUntil } from '../../support/net';
import { kill, signal, startChild, type Child } from '../children';
import type { KeyState, StoreKind, StoreServer } from '../store-kind';

const PREFIX = 'fault:';

/**
 * redis-server with AOF and `appendfsync always`: Redis writes and fsyncs each write before it
 * answers it, so a commit it acknowledged survives a crash of Redis and of the machine. The test
 * only kills the process, which `everysec` would survive as well (the write is in the kernel); it
 * runs the setting docs/deduplication.md tells users to run, under which the promise also holds
 * through a power cut, and whose cost is part of what the receivers see.
 */
class RedisFaultServer implements StoreServer {
  readonly durability = 'AOF, appendfsync always';
  private child: Child;

  constructor(
    private readonly port: number,
    private readonly dir: string,
  ) {
    this.child = this.spawn();
  }

  get pid(): number {
    return this.child.pid;
  }

  get receiverEnv(): Record<string, string> {
    return { FAULT_REDIS_URL: `redis://127.0.0.1:${this.port}` };
  }

  spawn(): Child {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always'];
    return startChild('redis-server', [...args, '--daemonize', 'no', '--loglevel', 'warning'], { stdio: 'ignore' });
  }

  async ready(): Promise<void> {
    await waitUntil(() => canConnect(this.port), 10_000, `redis-server did not start on port ${this.port}`);
  }

  freeze(): void {
    signal(this.child, 'SIGSTOP');
  }

  thaw(): void {
    signal(this.child, 'SIGCONT');
  }

  async kill(): Promise<void> {
    await kill(this.child);
  }

  async restart(): Promise<void> {
    this.child = this.spawn();
    await this.ready();
  }

  async states(ids: readonly string[]): Promise<Map<string, KeyState>> {
    const client = new Redis(this.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 1 });
    await client.connect();
    try {
      const states = new Map<string, KeyState>();
      for (let i = 0; i < ids.length; i += 500) {
        const chunk = ids.slice(i, i + 500);
        const values = await client.mget(chunk.map((id) => PREFIX + id));
        chunk.forEach((id, j) => states.set(id, values[j] === 'done' ? 'done' : values[j] == null ? 'absent' : 'claimed'));
      }
      return states;
    } finally {
      client.disconnect();
    }
  }

  async close(): Promise<void> {
    this.thaw();
    await this.kill();
  }
}

export const redisKind: StoreKind = {
  name: 'redis',
  async start(dir) {
    const found = spawnSync('redis-server', ['--version']);
    if (found.error !== undefined || found.status !== 0) {
      throw new Error("redis-server is not installed: install Debian's package (apt-get install redis-server); .ci/run does this on CI");
    }
    const data = join(dir, 'redis');
    mkdirSync(data);
    const server = new RedisFaultServer(await freePort(), data);
    await server.ready();
    return server;
  },
  open(env) {
    const url = env.FAULT_REDIS_URL;
    if (url === undefined) throw new Error('FAULT_REDIS_URL is not set');
    return redisStore({ url, prefix: PREFIX, commandTimeoutMs: 500 });
  },
};
