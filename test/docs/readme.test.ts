/**
 * The README is the front door: short, the install line and the clone's two commands near the top,
 * and a quick start that runs as written. The quick start is run for real: the README's program in
 * a process of its own, sent a delivery by the README's own `send` command.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../support/net';
import { codeBlocks, headings, read, root } from './markdown';

const readme = read('README.md');
const lines = readme.split('\n');
const lineOf = (text: string): number => lines.findIndex((l) => l.includes(text)) + 1;

/** The first block of a language after the heading named `heading`. */
function blockAfter(heading: string, lang: string): string {
  const at = headings('README.md').find((h) => h.text === heading);
  if (!at) throw new Error(`README.md has no heading "${heading}"`);
  const block = codeBlocks('README.md').find((b) => b.line > at.line && b.lang === lang);
  if (!block) throw new Error(`README.md has no ${lang} block after "${heading}"`);
  return block.code;
}

describe('README.md', () => {
  it('is at most 400 lines', () => {
    expect(lines.length).toBeLessThanOrEqual(400);
  });

  it('shows `npm install svc-webhooks` in its first 40 lines', () => {
    expect(lineOf('npm install svc-webhooks')).toBeGreaterThan(0);
    expect(lineOf('npm install svc-webhooks')).toBeLessThanOrEqual(40);
  });

  it('shows the clone commands, `npm start` (the example server) and `npm test`, in its first 60 lines', () => {
    for (const command of ['npm start', 'npm test']) {
      expect(lineOf(command)).toBeGreaterThan(0);
      expect(lineOf(command)).toBeLessThanOrEqual(60);
    }
  });

  it('has a quick start on Express of at most 10 lines, with a typed handler', () => {
    const code = blockAfter('Quick start (Express)', 'ts');
    expect(code.split('\n').length).toBeLessThanOrEqual(10);
    expect(code).toMatch(/from 'express'/);
    expect(code).toMatch(/\.on\('task\.created', \(event, ctx\) =>/);
  });

  it('has a test of a handler in at most 15 lines', () => {
    expect(blockAfter('Test your handlers', 'ts').split('\n').length).toBeLessThanOrEqual(15);
  });

  it('ends with a contents list that links every page of docs/ it names', () => {
    const contents = readme.slice(readme.indexOf('## Documentation'));
    for (const page of [
      'frameworks',
      'handlers',
      'options',
      'many-boards',
      'deduplication',
      'inbox',
      'exactly-once',
      'ordering',
      'observability',
      'security',
      'cli',
      'testing',
      'guarantees',
      'performance',
      'errors',
      'events',
    ]) {
      expect(contents).toContain(`](docs/${page}.md)`);
    }
  });
});

describe("README.md's quick start, run as written", () => {
  let server: ChildProcess | undefined;
  let dir: string | undefined;
  const tsx = require.resolve('tsx/cli');
  const secret = 'a-secret-for-the-quick-start-0123';

  afterEach(async () => {
    if (server?.pid !== undefined && server.exitCode === null) {
      const exited = new Promise((resolve) => server!.once('exit', resolve));
      process.kill(server.pid, 'SIGKILL');
      await exited;
    }
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it("answers the README's `send` command, and its handler logs the task", async () => {
    const port = await freePort();
    const program = blockAfter('Quick start (Express)', 'ts');
    // As written, but for the package name (resolved to the sources here) and the port, which must be free.
    const runnable = program.replace("from 'svc-webhooks'", `from ${JSON.stringify(join(root, 'src'))}`).replace('.listen(3000)', `.listen(${port})`);
    expect(runnable).toContain(`.listen(${port})`);
    dir = mkdtempSync(join(tmpdir(), 'svc-webhooks-quick-start-'));
    writeFileSync(join(dir, 'server.ts'), runnable);

    let output = '';
    // A user's app has express installed beside it; this one finds the project's.
    const env = { ...process.env, SVC_BOARD_WEBHOOK_SECRET: secret, NODE_PATH: join(root, 'node_modules') };
    // One process (tsx as a loader, not its CLI, which would start a second one), so its pid ends it.
    server = spawn(process.execPath, ['--import', 'tsx', join(dir, 'server.ts')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    server.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    server.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await listening(port).catch((err: Error) => {
      throw new Error(`${err.message}; the server wrote:\n${output}`);
    });

    const send = blockAfter('Quick start (Express)', 'sh')
      .split('\n')
      .find((l) => l.includes('npx svc-webhooks send'));
    expect(send).toBeDefined();
    const command = send!
      .replace('npx svc-webhooks', `${JSON.stringify(process.execPath)} ${JSON.stringify(tsx)} ${JSON.stringify(join(root, 'src/cli/main.ts'))}`)
      .replace(':3000/', `:${port}/`);
    const sent = spawnSync('bash', ['-c', command], {
      cwd: root,
      env: { ...process.env, SVC_BOARD_WEBHOOK_SECRET: secret },
      encoding: 'utf8',
      timeout: 30_000,
    });

    expect(sent.status).toBe(0);
    expect(sent.stdout).toMatch(/attempt 1: 200 ok/);
    await waitFor(() => output.includes('task created'));
    const line = JSON.parse(output.split('\n').find((l) => l.includes('"task created"'))!) as Record<string, unknown>;
    expect(typeof line.task).toBe('string');
    expect(typeof line.title).toBe('string');
    expect(output).not.toContain(secret);
  }, 60_000);
});

async function listening(port: number): Promise<void> {
  await waitFor(async () => {
    try {
      await fetch(`http://127.0.0.1:${port}/`);
      return true;
    } catch {
      return false;
    }
  });
}

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
