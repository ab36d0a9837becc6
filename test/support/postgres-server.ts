import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort } from './net';

/**
 * A real PostgreSQL server for the tests (Debian's `postgresql` package): `initdb` in a temporary
 * directory, `postgres` on a free loopback port. initdb refuses to run as root, so under root both
 * run as the `postgres` user. There is no fallback: without the package the tests fail and say how
 * to install it.
 */
export class PostgresServer {
  private child: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    private readonly bin: string,
    private readonly dir: string,
    private readonly owner: Owner | undefined,
  ) {}

  /** The postmaster's pid while it runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** A connection string for the superuser (trust authentication, loopback only). */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  static async start(): Promise<PostgresServer> {
    const bin = postgresBin();
    const owner = process.getuid?.() === 0 ? postgresUser() : undefined;
    const dir = mkdtempSync(join(tmpdir(), 'svc-webhooks-postgres-'));
    if (owner !== undefined) chownSync(dir, owner.uid, owner.gid);
    const init = spawnSync(join(bin, 'initdb'), ['-D', join(dir, 'data'), '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'], {
      ...owner,
      env: { PATH: process.env.PATH ?? '', LANG: 'C' },
      encoding: 'utf8',
    });
    if (init.status !== 0) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`initdb failed: ${init.error?.message ?? init.stderr}`);
    }
    const server = new PostgresServer(await freePort(), bin, dir, owner);
    await server.resume();
    return server;
  }

  /** (Re)starts the server on the same port and data directory, and waits until it answers queries. */
  async resume(): Promise<void> {
    const args = ['-D', join(this.dir, 'data'), '-p', String(this.port), '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${this.dir}`];
    // fsync off: the data survives a killed server process (the OS keeps it), which is all the tests
    // need; synchronous_commit stays on, so an acknowledged COMMIT is in the WAL.
    args.push('-c', 'fsync=off', '-c', 'max_connections=200', '-c', 'log_min_messages=log');
    // Its log goes to a file beside the data, quoted when it fails to start.
    const log = openSync(this.logPath, 'a');
    this.child = spawn(join(this.bin, 'postgres'), args, {
      ...this.owner,
      stdio: ['ignore', log, log],
      env: { PATH: process.env.PATH ?? '', LANG: 'C' },
    });
    closeSync(log);
    const child = this.child;
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`postgres exited with code ${child.exitCode} while starting: ${this.logTail()}`);
      if (await this.answers()) return;
      if (Date.now() > deadline) throw new Error(`postgres did not start on port ${this.port}: ${this.logTail()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  private get logPath(): string {
    return join(this.dir, 'server.log');
  }

  /** The server's last lines, leaving out the refusals of connections made while it starts. */
  private logTail(): string {
    const text = existsSync(this.logPath) ? readFileSync(this.logPath, 'utf8').trim() : '';
    const lines = text === '' ? [] : text.split('\n');
    const told = lines.filter((l) => !STARTING.test(l));
    if (told.length === 0) return '(it logged nothing)';
    return `${told.slice(-8).join(' | ')} (and ${lines.length - told.length} lines refusing connections while it started)`;
  }

  /** A clean stop (fast shutdown: open transactions roll back); `resume()` brings it back with its data. */
  async stop(): Promise<void> {
    await this.signalAndWait('SIGINT');
  }

  /** A crash: every server process is killed at once; `resume()` recovers from the WAL. */
  async kill(): Promise<void> {
    await this.signalAndWait('SIGKILL');
  }

  /** Freezes every server process: connections are accepted but nothing is answered (a hung database). */
  pause(): void {
    this.signalGroup('SIGSTOP');
  }

  unpause(): void {
    this.signalGroup('SIGCONT');
  }

  /** Runs one statement on a fresh connection (test setup and checks). */
  async query<R extends Record<string, unknown> = Record<string, unknown>>(text: string, values: unknown[] = []): Promise<R[]> {
    const client = new Client({ connectionString: this.url });
    await client.connect();
    try {
      return (await client.query<R>(text, values)).rows;
    } finally {
      await client.end();
    }
  }

  async close(): Promise<void> {
    this.unpause();
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async answers(): Promise<boolean> {
    const client = new Client({ connectionString: this.url, connectionTimeoutMillis: 1000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** The postmaster and its children (each backend leads a process group of its own, so a group signal would miss them). */
  private serverPids(): number[] {
    const pid = this.child?.pid;
    if (pid === undefined || this.child?.exitCode !== null) return [];
    return [pid, ...childPids(pid)];
  }

  private signalGroup(signal: NodeJS.Signals): void {
    for (const pid of this.serverPids()) {
      try {
        process.kill(pid, signal);
      } catch {
        // Already gone.
      }
    }
  }

  private async signalAndWait(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    // A stopped postmaster forks no backend between the listing and the kill: one forked then would
    // outlive it, holding the shared memory that a restart must find free.
    if (signal === 'SIGKILL') process.kill(child.pid as number, 'SIGSTOP');
    const pids = this.serverPids();
    if (signal === 'SIGKILL') this.signalGroup(signal);
    else {
      this.signalGroup('SIGCONT');
      child.kill(signal);
    }
    await exited;
    this.child = undefined;
    // Wait until no server process is left, so that a restart finds the data directory free.
    await waitForExit(pids);
  }
}

// What postgres logs for each connection it refuses while it starts or recovers.
const STARTING = /(FATAL: +the database system is (starting up|not yet accepting connections|in recovery mode)|DETAIL: +Consistent recovery state)/;

interface Owner {
  readonly uid: number;
  readonly gid: number;
}

/** The newest installed server: /usr/lib/postgresql/<version>/bin. */
function postgresBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'postgres')) && existsSync(join(root, v, 'bin', 'initdb')))
    : [];
  versions.sort((a, b) => Number(b) - Number(a));
  if (versions[0] === undefined) {
    throw new Error("PostgreSQL is not installed: install Debian's package (apt-get install postgresql); .ci/run does this on CI");
  }
  return join(root, versions[0], 'bin');
}

function postgresUser(): Owner {
  const uid = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) {
    throw new Error("running as root and there is no `postgres` user to run initdb and postgres as (Debian's postgresql package creates it)");
  }
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

function childPids(parent: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // "pid (comm) state ppid ...": comm may hold spaces, so read after its closing parenthesis.
      const stat = readFileSync(join('/proc', entry, 'stat'), 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent) found.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitForExit(pids: readonly number[]): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && pids.some(alive)) await new Promise((r) => setTimeout(r, 25));
}
