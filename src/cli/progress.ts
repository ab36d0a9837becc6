import type { CliIo } from './cli-io';

const FRAME_MS = 200;

/**
 * Shows `label` with the elapsed time on stderr, redrawn in place, until the returned function is
 * called. Only on an interactive terminal: in a pipe or a CI log the per-step lines the commands
 * print already tell the story, and a redrawn line would only add noise.
 */
export function startProgress(io: CliIo, label: string): () => void {
  if (!io.interactive) return () => undefined;
  const started = Date.now();
  const draw = (): void => {
    io.stderr.write(`\r\x1b[K${label} ${((Date.now() - started) / 1000).toFixed(1)} s`);
  };
  draw();
  const timer = setInterval(draw, FRAME_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    io.stderr.write('\r\x1b[K');
  };
}

/** Runs `work` with a progress line shown while it is pending. */
export async function withProgress<T>(io: CliIo, label: string, work: () => Promise<T>): Promise<T> {
  const stop = startProgress(io, label);
  try {
    return await work();
  } finally {
    stop();
  }
}
