import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const root = join(__dirname, '..', '..');
const run = promisify(execFile);

/** Starts `npm start`'s server on a free port and collects what it prints. */
function startExampleServer(env: Record<string, string> = {}): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'), 'examples/bot-server.ts'], {
    cwd: root,
    env: { ...process.env, PORT: '0', SVC_BOT_WEBHOOK_SECRET: '', SVC_BOARD_WEBHOOK_SECRET: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (out += c));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`example server did not start:\n${out}`)), 15_000);
    const check = setInterval(() => {
      if (/^id=/m.test(out)) {
        clearInterval(check);
        clearTimeout(timer);
        resolve({ child, output: () => out });
      }
    }, 50);
    child.once('exit', (code) => reject(new Error(`example server exited with ${code}:\n${out}`)));
  });
}

describe('the example server (npm start)', () => {
  let server: { child: ChildProcess; output: () => string };
  beforeAll(async () => {
    server = await startExampleServer();
  });
  afterAll(() => {
    server?.child.kill('SIGTERM');
  });

  it('prints a curl command that reaches a command handler, and a repeat that is a duplicate', async () => {
    const curl = server.output().split('\n').find((l) => l.startsWith('curl '))!;
    expect(curl).toContain('X-Svc-Signature: sha256=');
    const first = await run('bash', ['-c', curl]);
    expect(JSON.parse(first.stdout)).toEqual({ ok: true });
    const again = await run('bash', ['-c', curl]);
    expect(JSON.parse(again.stdout)).toEqual({ ok: true, duplicate: true });
    await new Promise((r) => setTimeout(r, 200));
    expect(server.output()).toContain('"msg":"deploy command received"');
  });

  it('prints a board ping recipe that signs at send time with openssl and reaches the ping handler', async () => {
    const recipe = server.output().split('\n').find((l) => l.startsWith('id='))!;
    const res = await run('bash', ['-c', recipe]);
    expect(JSON.parse(res.stdout)).toEqual({ ok: true });
    await new Promise((r) => setTimeout(r, 200));
    expect(server.output()).toContain('ping received: the board webhook is wired up');
  });
});

describe('the example server on real secrets', () => {
  const BOT = 'real-bot-secret-+/=-0123456789abcdef';
  const BOARD = 'real-board-secret-0123456789abcdef';
  const env = { SVC_BOT_WEBHOOK_SECRET: BOT, SVC_BOARD_WEBHOOK_SECRET: BOARD };
  let server: { child: ChildProcess; output: () => string };
  beforeAll(async () => {
    server = await startExampleServer(env);
  });
  afterAll(() => {
    server?.child.kill('SIGTERM');
  });

  it('prints no secret and nothing signed with one; its commands sign at send time from the environment', async () => {
    const printed = server.output();
    expect(printed).not.toContain(BOT);
    expect(printed).not.toContain(BOARD);
    expect(printed).not.toMatch(/[0-9a-f]{64}/);
    const lines = printed.split('\n');
    // The bot hint runs the CLI; here from the source rather than through npx.
    const send = lines.find((l) => l.includes('npx svc-webhooks send'))!.replace('npx svc-webhooks', `SVC_WEBHOOKS_CLI_SOURCE=1 node ${join(root, 'bin', 'svc-webhooks.js')}`);
    const sent = await run('bash', ['-c', send], { env: { ...process.env, ...env } });
    expect(sent.stdout).toContain('delivered');
    const ping = await run('bash', ['-c', lines.find((l) => l.startsWith('id='))!], { env: { ...process.env, ...env } });
    expect(JSON.parse(ping.stdout)).toEqual({ ok: true });
    await new Promise((r) => setTimeout(r, 200));
    expect(server.output()).toContain('ping received: the board webhook is wired up');
    expect(server.output()).not.toContain(BOT);
    expect(server.output()).not.toContain(BOARD);
  });
});

describe('the example server on the development secrets', () => {
  it('refuses to listen beyond this machine', async () => {
    const child = spawn(process.execPath, [join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'), 'examples/bot-server.ts'], {
      cwd: root,
      env: { ...process.env, PORT: '0', HOST: '0.0.0.0', SVC_BOT_WEBHOOK_SECRET: '', SVC_BOARD_WEBHOOK_SECRET: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (c) => (out += c));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(out).toContain('refusing to listen beyond this machine');
  });
});
