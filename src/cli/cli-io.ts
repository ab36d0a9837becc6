/** The standard input, as a command that asks the user reads it. */
export type CliStdin = NodeJS.ReadableStream & { readonly isTTY?: boolean };

/** Everything the CLI touches outside itself, so tests can run it in-process. */
export interface CliIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Relative file paths are read from here. */
  readonly cwd: string;
  /** Animated progress is drawn only on an interactive terminal, never into a pipe or a log. */
  readonly interactive: boolean;
  readonly fetch: typeof fetch;
  readonly sleep: (ms: number) => Promise<void>;
  /** Marks a token or secret the run was given, so no output ever shows it (set by `main`). */
  readonly holdSecret?: (value: string) => string;
  /** Resolves when the user asks a long-running command (`status --watch`) to stop: Ctrl-C or SIGTERM. */
  readonly interrupted?: () => Promise<void>;
  /**
   * The standard input. A command asks the user to confirm something only when it is a terminal
   * (`isTTY`); absent or piped, it never asks and refuses as it would without one.
   */
  readonly stdin?: CliStdin;
}

export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    interactive: process.stderr.isTTY === true,
    fetch: globalThis.fetch,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    stdin: process.stdin,
    // Listened for only when a command waits for it: other commands keep Ctrl-C's default.
    interrupted: () =>
      new Promise((resolve) => {
        const stop = (): void => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          resolve();
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      }),
  };
}
