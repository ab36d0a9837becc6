/** Exit codes: 1 when the operation failed, 2 when the command was used wrongly, 3 when svc could not be reached. */
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
/** svc's API did not tell (no answer, 5xx, a refused token): `status` and `board-webhook reenable` say so apart from a failure. */
export const EXIT_UNREACHABLE = 3;

/** An error the CLI reports as one line on stderr before exiting with `exitCode`. */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: typeof EXIT_FAILURE | typeof EXIT_USAGE | typeof EXIT_UNREACHABLE = EXIT_FAILURE,
  ) {
    super(message);
  }
}

export function usageError(message: string): CliError {
  return new CliError(message, EXIT_USAGE);
}
