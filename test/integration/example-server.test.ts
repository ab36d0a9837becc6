import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const root = join(__dirname, '..', '..');
const run = promisify(execFile);

/** Starts `npm start`'s server on a free port and collects what it prints. */
function startExampleServer(): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'), 'examples/bot-server.ts'], {
    cwd: root,
    env: { ...process.env, PORT: '0', SVC_BOT_WEBHOOK_SECRET: '', SVC_BOARD_WEBHOOK_SECRET: '' },
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
