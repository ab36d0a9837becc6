import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { canConnect, waitUntil } from './net';

/** A started process as the cluster needs it: its pid and the promise of its end. */
export interface ClusterProcess {
  readonly pid: number;
  readonly exited: Promise<unknown>;
  readonly ended: () => boolean;
}

/** How the cluster starts a process (the fault test passes its own, which tracks every child by pid). */
export type Launch = (command: string, args: readonly string[]) => ClusterProcess;

/** One redis-server of the cluster. */
export interface ClusterNode {
  readonly port: number;
  /** The cluster's node id (CLUSTER MYID); a restarted node keeps it. */
  readonly id: string;
  /** The process now serving the node. */
  process: ClusterProcess;
}

export interface RedisClusterOptions {
  /** cluster-node-timeout, in ms: how long a master may be unreachable before its replica takes over. Default 1500. */
  readonly nodeTimeoutMs?: number;
  readonly launch?: Launch;
}

const MASTERS = 3;
// The cluster bus listens on the port plus 10000: both must be free, and below 65536.
const BUS_OFFSET = 10_000;

/**
 * A real Redis Cluster for the tests: six redis-server processes in cluster mode on free loopback
 * ports (three masters, each with one replica), joined by `redis-cli --cluster create`, each
 * stopped by its pid. There is no fallback: without redis-server and redis-cli the tests fail and
 * say how to install them.
 */
export class RedisCluster {
  private constructor(
    readonly nodes: ClusterNode[],
    private readonly dir: string,
    private readonly launch: Launch,
    private readonly nodeTimeoutMs: number,
  ) {}

  /** Seed node URLs, as a client is given them. */
  get seeds(): string[] {
    return this.nodes.map((n) => `redis://127.0.0.1:${n.port}`);
  }

  static async start(options: RedisClusterOptions = {}): Promise<RedisCluster> {
    for (const tool of ['redis-server', 'redis-cli']) {
      const found = spawnSync(tool, ['--version']);
      if (found.error !== undefined || found.status !== 0) {
        throw new Error(
          `${tool} is not installed: install Debian's redis-server package (apt-get install redis-server, which brings redis-cli); .ci/run does this on CI`,
        );
      }
    }
    const launch = options.launch ?? spawnProcess;
    const nodeTimeoutMs = options.nodeTimeoutMs ?? 1500;
    const dir = mkdtempSync(join(tmpdir(), 'svc-webhooks-cluster-'));
    const started: ClusterProcess[] = [];
    try {
      const ports = await clusterPorts(2 * MASTERS);
      for (const port of ports) {
        const data = join(dir, String(port));
        mkdirSync(data);
        started.push(launch('redis-server', serverArgs(port, data, nodeTimeoutMs)));
      }
      await Promise.all(ports.map((port) => waitUntil(() => canConnect(port), 10_000, `redis-server did not start on port ${port}`)));
      const create = spawnSync('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '1', '--cluster-yes'], {
        encoding: 'utf8',
      });
      if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stderr || create.stdout}`);
      const nodes: ClusterNode[] = [];
      for (const [i, port] of ports.entries()) nodes.push({ port, id: String(await ask(port, 'CLUSTER', 'MYID')), process: started[i]! });
      const cluster = new RedisCluster(nodes, dir, launch, nodeTimeoutMs);
      await cluster.settled(30_000);
      return cluster;
    } catch (err) {
      for (const p of started) kill(p);
      await Promise.all(started.map((p) => p.exited));
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** The nodes now running. */
  get running(): ClusterNode[] {
    return this.nodes.filter((n) => !n.process.ended());
  }

  /**
   * The node now serving `slot`: a running node that takes itself for the slot's master and says
   * the cluster is ok (undefined while none does). A replica that won its election says so at once;
   * the other nodes learn it a little later.
   */
  async masterOf(slot: number): Promise<ClusterNode | undefined> {
    for (const node of this.running) {
      try {
        const ranges = (await ask(node.port, 'CLUSTER', 'SLOTS')) as Array<[number, number, [string, number, string]]>;
        const range = ranges.find(([from, to]) => slot >= from && slot <= to);
        if (range?.[2][2] === node.id && (await this.state(node.port)) === 'ok') return node;
      } catch {
        // not answering: not serving
      }
    }
    return undefined;
  }

  /** The hash slot of a key (CLUSTER KEYSLOT). */
  async slotOf(key: string): Promise<number> {
    return Number(await ask(this.running[0]!.port, 'CLUSTER', 'KEYSLOT', key));
  }

  /** Kills a node with SIGKILL, by its pid, and waits for its end. */
  async kill(node: ClusterNode): Promise<void> {
    kill(node.process);
    await node.process.exited;
  }

  /**
   * Starts a killed node again, on its port and with its cluster state: it rejoins the cluster (as
   * a replica of the master that took over its slots) once it answers.
   */
  async restart(node: ClusterNode): Promise<void> {
    if (!node.process.ended()) throw new Error(`node ${node.port} is still running`);
    node.process = this.launch('redis-server', serverArgs(node.port, join(this.dir, String(node.port)), this.nodeTimeoutMs));
    await waitUntil(() => canConnect(node.port), 10_000, `redis-server did not restart on port ${node.port}`);
  }

  /**
   * Waits until every running node says the cluster is ok, every slot is served by a running
   * master, and every master that has a running replica has it in sync.
   */
  async settled(timeoutMs: number): Promise<void> {
    await waitUntil(() => this.isSettled(), timeoutMs, 'the redis cluster did not settle');
  }

  async close(): Promise<void> {
    const left = this.nodes.map((n) => n.process).filter((p) => !p.ended());
    for (const p of left) kill(p);
    await Promise.all(left.map((p) => p.exited));
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async isSettled(): Promise<boolean> {
    try {
      for (const node of this.running) {
        if ((await this.state(node.port)) !== 'ok') return false;
        const info = String(await ask(node.port, 'INFO', 'replication'));
        if (info.includes('role:slave') && !info.includes('master_link_status:up')) return false;
      }
      const ranges = (await ask(this.running[0]!.port, 'CLUSTER', 'SLOTS')) as Array<[number, number, [string, number, string]]>;
      const covered = ranges.reduce((n, [from, to]) => n + to - from + 1, 0);
      return covered === 16384 && ranges.every(([, , master]) => this.running.some((n) => n.id === master[2]));
    } catch {
      return false;
    }
  }

  private async state(port: number): Promise<string | undefined> {
    try {
      return /cluster_state:(\w+)/.exec(String(await ask(port, 'CLUSTER', 'INFO')))?.[1];
    } catch {
      return undefined;
    }
  }
}

function serverArgs(port: number, dir: string, nodeTimeoutMs: number): string[] {
  return [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--daemonize',
    'no',
    '--loglevel',
    'warning',
    '--cluster-enabled',
    'yes',
    '--cluster-config-file',
    'nodes.conf',
    '--cluster-node-timeout',
    String(nodeTimeoutMs),
    // The data lives on two nodes; the test kills processes, never the machine, and restarts none.
    '--save',
    '',
    '--appendonly',
    'no',
  ];
}

/** One command to one node, on a connection of its own (no cluster redirections followed). */
async function ask(port: number, ...command: [string, ...string[]]): Promise<unknown> {
  const client = new Redis(port, '127.0.0.1', {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await client.call(...command);
  } finally {
    client.disconnect();
  }
}

function kill(p: ClusterProcess): void {
  if (p.ended()) return;
  try {
    process.kill(p.pid, 'SIGCONT');
    process.kill(p.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

function spawnProcess(command: string, args: readonly string[]): ClusterProcess {
  const child = spawn(command, args, { stdio: 'ignore' });
  if (child.pid === undefined) throw new Error(`could not start ${command}`);
  let done = false;
  const exited = new Promise((resolve) =>
    child.once('exit', () => {
      done = true;
      resolve(undefined);
    }),
  );
  return { pid: child.pid, exited, ended: () => done };
}

/** `count` loopback ports that are free, each with its cluster bus port (+10000) free too. */
async function clusterPorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  for (let attempts = 0; ports.length < count; attempts++) {
    if (attempts > 500) throw new Error('no free ports for the redis cluster');
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    if (!ports.includes(port) && (await isFree(port)) && (await isFree(port + BUS_OFFSET))) ports.push(port);
  }
  return ports;
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}
