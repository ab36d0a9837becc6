import type { CliIo } from './cli-io';

export interface Command {
  readonly name: string;
  /** One line for the command list. */
  readonly summary: string;
  /** The full text of `svc-webhooks <name> --help`. */
  readonly help: string;
  /** Runs the command; resolves to the exit code, or throws a CliError. */
  run(args: readonly string[], io: CliIo): Promise<number>;
}
