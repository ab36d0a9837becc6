import { createInterface } from 'node:readline/promises';
import type { SvcClient } from '../../client/svc-client';
import { displayUrl } from '../../watch/classify-state';
import { reenableOnce } from '../../watch/reenable-once';
import { webhookSecretProblem } from '../../client/webhook-secret';
import { CliError, EXIT_UNREACHABLE, usageError } from '../cli-error';
import type { CliIo, CliStdin } from '../cli-io';
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
 * holds that URL, or, without `--url` on a terminal, when the user confirms the URL svc holds by
 * typing its host. Prints each step taken and the state svc reports after; exit 0 re-enabled (or
 * not disabled), 1 not (another URL, none given or confirmed, the ping failed), 3 svc did not tell.
 */
export async function reenable(io: CliIo, args: ReenableArgs): Promise<number> {
  const { board } = args;
  const problem = webhookSecretProblem(args.secret);
  if (problem !== undefined) throw usageError(`the webhook secret is refused: ${problem}`);
  const run = (expectedUrl: string | undefined) =>
    withProgress(io, 're-enabling: ping, then PUT', () =>
      reenableOnce({ client: args.client, boardId: board, secret: args.secret, expectedUrl, sleep: io.sleep }),
    );
  let result = await run(args.expectedUrl);
  // No --url and svc holds a URL: a person at a terminal may confirm it; a script or a pipe may not.
  if (result.outcome === 'url_unconfirmed' && args.expectedUrl === undefined && io.stdin?.isTTY === true) {
    const confirmed = await confirmedUrl(io, io.stdin, args);
    if (confirmed === undefined) throw new CliError('not re-enabled: the URL svc holds was not confirmed; nothing was sent');
    // Checked again against svc's state before anything is sent: a URL changed meanwhile is refused.
    result = await run(confirmed);
  }
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

/**
 * Shows the URL svc holds (without credentials or query) and asks the user to type its host. Answers
 * that URL when they did, undefined for anything else (an empty line, end of input).
 */
async function confirmedUrl(io: CliIo, stdin: CliStdin, args: ReenableArgs): Promise<string | undefined> {
  const state = await args.client.getBoardWebhook(args.board);
  const url = typeof state?.url === 'string' ? state.url : '';
  const host = URL.canParse(url) ? new URL(url).host : '';
  if (host === '') return undefined;
  io.stderr.write(
    `svc holds ${displayUrl(url)}: re-enabling sends your webhook secret there.\nType its host, ${printable(host)}, if it is your receiver's (anything else stops): `,
  );
  const answer = await lineFrom(stdin);
  return answer.trim().toLowerCase() === host ? url : undefined;
}

/** One line typed on stdin (node:readline/promises); '' when the input ends first. */
async function lineFrom(stdin: CliStdin): Promise<string> {
  const rl = createInterface({ input: stdin, terminal: false });
  try {
    return await new Promise<string>((resolve, reject) => {
      // The answer to a line typed just before the input ended settles after 'close': let it win.
      rl.once('close', () => setImmediate(() => resolve('')));
      rl.question('').then(resolve, reject);
    });
  } finally {
    rl.close();
  }
}
