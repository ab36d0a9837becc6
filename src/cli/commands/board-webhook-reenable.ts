import type { SvcClient } from '../../client/svc-client';
import { reenableOnce } from '../../watch/reenable-once';
import { webhookSecretProblem } from '../../client/webhook-secret';
import { CliError, EXIT_UNREACHABLE, usageError } from '../cli-error';
import type { CliIo } from '../cli-io';
import { printable, terminalJson } from '../format';
import { withProgress } from '../progress';
import { statusJson } from '../status-lines';

export interface ReenableArgs {
  readonly client: SvcClient;
  readonly board: string;
  readonly secret: string;
  /** `--url`: the secret is PUT only when svc holds this URL. */
  readonly expectedUrl: string | undefined;
  readonly json: boolean;
}

/**
 * `board-webhook reenable <id> --url <url>`: the watcher's re-enable, once, by hand, only when svc
 * holds that URL. Prints each step taken and the state svc reports after; exit 0 re-enabled (or not
 * disabled), 1 not (another URL, none given, the ping failed), 3 svc did not tell.
 */
export async function reenable(io: CliIo, args: ReenableArgs): Promise<number> {
  const { board } = args;
  const problem = webhookSecretProblem(args.secret);
  if (problem !== undefined) throw usageError(`the webhook secret is refused: ${problem}`);
  const result = await withProgress(io, 're-enabling: ping, then PUT', () =>
    reenableOnce({ client: args.client, boardId: board, secret: args.secret, expectedUrl: args.expectedUrl, sleep: io.sleep }),
  );
  if (args.json) {
    io.stdout.write(terminalJson({ outcome: result.outcome, steps: result.steps, webhook: statusJson(result.status) }));
  } else {
    for (const step of result.steps) io.stdout.write(`${printable(step)}\n`);
  }
  const state = `svc reports the board webhook of board ${printable(board)} ${printable(result.status.summary)}`;
  switch (result.outcome) {
    case 'reenabled':
    case 'not_disabled':
      if (!args.json) io.stdout.write(`${result.outcome === 'not_disabled' ? 'nothing to do: ' : ''}${state}\n`);
      return 0;
    case 'unreachable':
      throw new CliError(state, EXIT_UNREACHABLE);
    case 'missing':
      throw new CliError(`${state}; set it with board-webhook set`);
    case 'misdirected':
      throw new CliError(`not re-enabled: ${state}`);
    case 'url_unconfirmed':
      throw new CliError(`not re-enabled: svc holds ${printable(result.status.url ?? 'no URL')}; give it as --url if it is your receiver's`);
    default:
      throw new CliError(`not re-enabled; ${state}`);
  }
}
