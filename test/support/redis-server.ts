import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canConnect, freePort, waitUntil } from './net';

/**
 * A real redis-server for the tests, on a free loopback port, with its own data directory. There is
 * no fallback: without redis-server the tests fail and say how to install it.
 */
export class RedisServer {
  private child: ChildProcess | undefined;
  private readonly dir = mkdtempSync(join(tmpdir(), 'svc-webhooks-redis-'));

  private constructor(
    readonly port: number,
    private readonly appendOnly: boolean,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /**
   * Starts a server. With AOF on (the default, fsync always) its keys survive a stop and restart;
   * a throughput benchmark turns it off.
   */
  static async start(options: { appendOnly?: boolean } = {}): Promise<RedisServer> {
    const found = spawnSync('redis-server', ['--version']);
    if (found.error !== undefined || found.status !== 0) {
      throw new Error("redis-server is not installed: install Debian's package (apt-get install redis-server); .ci/run does this on CI");
    }
    const server = new RedisServer(await freePort(), options.appendOnly ?? true);
    await server.resume();
    return server;
  }

  /** (Re)starts the process on the same port and data. */
  async resume(): Promise<void> {
    this.child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--dir',
        this.dir,
        '--save',
        '',
        ...(this.appendOnly ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
        '--daemonize',
        'no',
        '--loglevel',
        'warning',
      ],
      { stdio: 'ignore' },
    );
    await waitUntil(() => canConnect(this.port), 5000, `redis-server did not start on port ${this.port}`);
  }

  /** Stops the process (an outage); `resume()` brings it back with its data. */
  async stop(): Promise<void> {
    const child = this.child;
    if (child === undefined || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
    this.child = undefined;
  }

  /** Freezes the process: it accepts connections but answers nothing (a slow store). */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  unpause(): void {
    this.child?.kill('SIGCONT');
  }

  async close(): Promise<void> {
    this.unpause();
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
