import { spawn } from 'node:child_process';
import { join } from 'node:path';

/**
 * The default logger writes in batches, off the request path. Lines logged before `close()` resolves,
 * or before the process dies of an uncaught exception, are written; a SIGKILL without close() loses
 * the pending batch (which is why the batching is real, and why close() matters).
 */
const ROOT = join(__dirname, '..', '..');
const CHILD = join(ROOT, 'test', 'support', 'log-flush-child.ts');
const COUNT = 10; // about 2.5 KB of lines: less than one batch

function run(mode: 'close' | 'crash' | 'kill' | 'exit'): Promise<{ lines: string[]; code: number | null; signal: NodeJS.Signals | null; setup: string }> {
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', CHILD], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, MODE: mode, COUNT: String(COUNT) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return new Promise((resolve) => {
    child.once('close', (code, signal) =>
      resolve({
        lines: out.split('\n').filter((l) => l.includes(mode === 'exit' ? 'process.exit' : '"delivery received"')),
        code,
        signal,
        setup: /^LOADED (.*)$/m.exec(err)?.[1] ?? err,
      }),
    );
  });
}

describe('the default logger', () => {
  it('has written every line logged before close() resolved, even if the process is then killed', async () => {
    const { lines, signal, setup } = await run('close');
    expect(signal).toBe('SIGKILL');
    // pino loads after the first line, off the first delivery's answer; the lines' scrub and the
    // deliveries never load undici (about 25 ms).
    expect(JSON.parse(setup)).toEqual({ pino: false, undici: false });
    expect(lines).toHaveLength(COUNT);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ webhook: 'board', outcome: 'handled', status: 200, kind: 'task.updated' });
  }, 30_000);

  it('writes the pending lines when the process dies of an uncaught exception', async () => {
    const { lines, code } = await run('crash');
    expect(code).toBe(1);
    expect(lines).toHaveLength(COUNT);
  }, 30_000);

  it('writes a line logged before pino was loaded when the process exits in the same tick', async () => {
    const { lines, code } = await run('exit');
    expect(code).toBe(0);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 40, name: 'svc-webhooks', webhook: 'board' });
  }, 30_000);

  it('batches lines: a SIGKILL without close() loses the batch not yet written', async () => {
    const { lines, signal } = await run('kill');
    expect(signal).toBe('SIGKILL');
    expect(lines.length).toBeLessThan(COUNT);
  }, 30_000);
});
