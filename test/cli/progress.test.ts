import type { CliIo } from '../../src/cli/cli-io';
import { withProgress } from '../../src/cli/progress';

function io(interactive: boolean): { io: CliIo; stderr: () => string } {
  let stderr = '';
  return {
    io: {
      stdout: { write: () => true },
      stderr: { write: (text: string) => (stderr += text) },
      env: {},
      cwd: '.',
      interactive,
      fetch: globalThis.fetch,
      sleep: async () => undefined,
    },
    stderr: () => stderr,
  };
}

describe('progress', () => {
  it('draws an updating line on a terminal and clears it when done', async () => {
    const t = io(true);
    const result = await withProgress(t.io, 'pinging', () => new Promise((resolve) => setTimeout(() => resolve('done'), 450)));
    expect(result).toBe('done');
    // oxlint-disable-next-line no-control-regex -- the progress line is redrawn with a terminal escape
    expect(t.stderr().match(/\r\x1b\[Kpinging \d+\.\d s/g)!.length).toBeGreaterThanOrEqual(2);
    expect(t.stderr().endsWith('\r\x1b[K')).toBe(true);
  });

  it('writes nothing into a pipe or a log', async () => {
    const t = io(false);
    await withProgress(t.io, 'pinging', async () => undefined);
    expect(t.stderr()).toBe('');
  });

  it('clears the line when the work fails', async () => {
    const t = io(true);
    await expect(withProgress(t.io, 'x', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(t.stderr().endsWith('\r\x1b[K')).toBe(true);
  });
});
