import { botTokenProblem } from '../../client/bot-token';
import { SvcClient } from '../../client/svc-client';
import { isSvcClientError } from '../../client/svc-client-error';
import { tokenKind } from '../../client/token-kinds';
import { webhookUrlProblem } from '../../client/webhook-url';
import { isBoardId } from '../../watch/board-list';
import { watchWebhooks } from '../../watch/watch-webhooks';
import type { WatchOptions } from '../../watch/watch-options';
import type { WebhookStatus } from '../../watch/watch-types';
import { CliError, EXIT_FAILURE, EXIT_UNREACHABLE, usageError } from '../cli-error';
import type { CliIo } from '../cli-io';
import type { Command } from '../command';
import { parseOptions, positiveNumber, wholeMilliseconds } from '../parse-options';
import { withProgress } from '../progress';
import { readInputFile, requiredBaseUrl, requiredToken } from '../read-input';
import { printable, terminalJson } from '../format';
import { changeLine, statusJson, statusTable } from '../status-lines';

const help = `Usage: svc-webhooks status --board <id> [--board <id> ...] [--boards-file <file>] [--bot] [options]

Asks svc for the state of each webhook and prints one line each: the board id (or bot),
its state, since when, deliveries pending, and the last error (or what the state means).
Ready for cron and monitoring:

  exit 0  every webhook is healthy
  exit 1  any is failing, disabled, paused, missing or misdirected (events are being
          lost, or soon, or go elsewhere)
  exit 2  usage error
  exit 3  svc could not tell for some webhook (no answer, 5xx, a refused token)
          and none is known to be failing, disabled, paused or missing; or the base
          URL is not svc's API (GET /api/version is asked first: a 404 there is a
          wrong --base-url, not missing webhooks)

States: healthy; failing (deliveries fail: svc disables it a day after they began, and drops
its queue); disabled (its queue was dropped; re-enable with board-webhook reenable); paused
(a board below the Business plan: new events are not queued); missing (404: deleted or never
set); misdirected (with --url or --bot-url: svc delivers to another scheme, host, port or
path; both URLs are printed without their query); unreachable (svc's API did not tell: the
state is unknown).

Options:
  --board <id>             a board whose webhook to check (repeat for several)
  --boards-file <file>     board ids, one per line (blank lines and # comments skipped)
  --bot                    check the bot webhook too (its token: SVC_BOT_TOKEN or --bot-token-file)
  --url <url>              the URL every board webhook should deliver to: another one at svc
                           is misdirected (the query and a trailing slash are not compared)
  --bot-url <url>          the URL the bot webhook should deliver to (with --bot)
  --base-url <url>         svc's base address (or SVC_BASE_URL)
  --token-file <file>      the token of a person who manages the boards (default: SVC_TOKEN)
  --bot-token-file <file>  the bot token (default: SVC_BOT_TOKEN)
  --json                   print JSON: { "exitCode", "webhooks": [...] }; with --watch, one
                           JSON line per change
  --watch                  keep watching until interrupted (Ctrl-C): print the states, then a
                           line for each change; exits with the code of the last states
  --interval-ms <ms>       with --watch: how often each webhook is asked (default 60000)
  --max-rps <n>            calls to svc started per second, at most (default 10)
  --timeout-ms <ms>        how long one call to svc may take (default 10000)
  --allow-insecure-http    send the tokens over plain http:// to a host other than this machine
  -h, --help               show this help

Example (cron, every 15 minutes):
  */15 * * * * SVC_TOKEN=... svc-webhooks status --base-url https://acme.svc.example.com \\
    --boards-file /etc/svc/boards.txt || alert "svc webhooks need attention"
`;

const KNOWN_BAD = new Set(['failing', 'disabled', 'paused', 'missing', 'misdirected']);

/** 1 when any webhook is known bad; else 3 when svc did not tell for any; else 0. */
export function statusExitCode(statuses: readonly WebhookStatus[]): number {
  if (statuses.some((s) => KNOWN_BAD.has(s.state))) return EXIT_FAILURE;
  return statuses.some((s) => s.state === 'unreachable') ? EXIT_UNREACHABLE : 0;
}

export const statusCommand: Command = {
  name: 'status',
  summary: 'print the state svc reports for each webhook (exit 0 healthy, 1 not, 3 svc unreachable)',
  help,
  async run(args, io) {
    const { values, positionals } = parseOptions('status', args, {
      board: { type: 'string', multiple: true },
      'boards-file': { type: 'string' },
      bot: { type: 'boolean' },
      url: { type: 'string' },
      'bot-url': { type: 'string' },
      'base-url': { type: 'string' },
      'token-file': { type: 'string' },
      'bot-token-file': { type: 'string' },
      json: { type: 'boolean' },
      watch: { type: 'boolean' },
      'interval-ms': { type: 'string' },
      'max-rps': { type: 'string' },
      'timeout-ms': { type: 'string' },
      'allow-insecure-http': { type: 'boolean' },
    });
    if (positionals.length > 0) throw usageError('status takes no arguments; name boards with --board or --boards-file');
    const watch = values.watch === true;
    if (!watch && values['interval-ms'] !== undefined) throw usageError('--interval-ms goes with --watch');
    const boards = boardIds(io, values.board ?? [], values['boards-file']);
    if (boards.length === 0 && values.bot !== true) throw usageError('name the webhooks to check: --board <id>, --boards-file <file> or --bot');
    const boardUrl = expectedUrl(values.url, '--url', boards.length > 0 ? undefined : '--url goes with --board or --boards-file');
    const botUrl = expectedUrl(values['bot-url'], '--bot-url', values.bot === true ? undefined : '--bot-url goes with --bot');
    const clients = {
      baseUrl: requiredBaseUrl(io, values['base-url']),
      fetch: io.fetch,
      timeoutMs: wholeMilliseconds(values['timeout-ms'], '--timeout-ms') ?? 10_000,
      allowInsecureHttp: values['allow-insecure-http'] === true,
    };
    const client = new SvcClient({ ...clients, ...(boards.length === 0 ? {} : { token: personToken(io, values['token-file']) }) });
    const bot =
      values.bot === true
        ? { client: new SvcClient({ ...clients, token: botToken(io, values['bot-token-file']) }), ...(botUrl === undefined ? {} : { expectUrl: botUrl }) }
        : undefined;
    const options: WatchOptions = {
      client,
      ...(boards.length === 0 ? {} : { boards }),
      ...(boardUrl === undefined ? {} : { expectUrl: boardUrl }),
      ...(bot === undefined ? {} : { bot }),
      intervalMs: intervalMs(values['interval-ms']),
      maxRequestsPerSecond: maxRps(values['max-rps']),
      logger: false,
    };
    const json = values.json === true;
    await withProgress(io, 'asking svc', () => checkBaseUrl(client, clients.baseUrl));
    return watch ? watching(io, options, json) : once(io, options, json);
  },
};

/**
 * A wrong base URL answers 404 for every webhook, which would read as every webhook `missing`: svc
 * answers GET /api/version (no token), so an address that does not is told apart before anything
 * else is asked. No answer at all is left to the webhooks' own lines (`unreachable`).
 */
async function checkBaseUrl(client: SvcClient, baseUrl: string): Promise<void> {
  try {
    await client.version();
  } catch (err) {
    if (!isSvcClientError(err)) throw err;
    const notSvc = err.code === 'invalid_response' || (err.code === 'svc_api_error' && err.status !== undefined && err.status < 500 && err.status !== 429);
    if (!notSvc) return;
    const answered = err.code === 'invalid_response' ? 'with something that is not its JSON' : `${err.status}`;
    throw new CliError(
      `${printable(baseUrl)} does not look like svc's API: GET /api/version answered ${answered}, so no webhook was checked (a 404 there is a wrong base URL, not missing webhooks); set --base-url or SVC_BASE_URL to the address svc runs at, without /api`,
      EXIT_UNREACHABLE,
    );
  }
}

async function once(io: CliIo, options: WatchOptions, json: boolean): Promise<number> {
  const watcher = watchWebhooks(options);
  const statuses = await withProgress(io, 'asking svc', async () => {
    await watcher.checked();
    const found = watcher.statuses();
    await watcher.close();
    return found;
  });
  const code = statusExitCode(statuses);
  io.stdout.write(json ? terminalJson({ exitCode: code, webhooks: statuses.map(statusJson) }) : statusTable(statuses, Date.now()));
  return code;
}

async function watching(io: CliIo, options: WatchOptions, json: boolean): Promise<number> {
  if (io.interrupted === undefined) throw usageError('--watch needs a terminal or process that can be interrupted');
  let first = true;
  const watcher = watchWebhooks({
    ...options,
    onChange: (change) => {
      if (first) return;
      io.stdout.write(json ? terminalJson({ previous: change.previous?.state ?? null, ...statusJson(change.current) }, 0) : changeLine(change));
    },
  });
  await Promise.race([watcher.checked(), io.interrupted()]);
  const initial = watcher.statuses();
  if (json) for (const status of initial) io.stdout.write(terminalJson({ previous: null, ...statusJson(status) }, 0));
  else io.stdout.write(statusTable(initial, Date.now()));
  first = false;
  await io.interrupted();
  const last = watcher.statuses();
  await watcher.close();
  return statusExitCode(last);
}

/** An expected URL: one svc could hold (public https), given only with the webhooks it is for. */
function expectedUrl(value: string | undefined, option: string, misplaced: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (misplaced !== undefined) throw usageError(misplaced);
  const problem = webhookUrlProblem(value);
  if (problem !== undefined) throw usageError(`${option} must be the https URL svc should deliver to (svc holds no other): ${problem}`);
  return value;
}

function maxRps(value: string | undefined): number {
  const rps = positiveNumber(value, '--max-rps') ?? 10;
  if (rps < 0.01 || rps > 10_000) throw usageError('--max-rps must be from 0.01 to 10000');
  return rps;
}

function intervalMs(value: string | undefined): number {
  const ms = wholeMilliseconds(value, '--interval-ms') ?? 60_000;
  if (ms < 10 || ms > 86_400_000) throw usageError('--interval-ms must be at least 10 and at most 86400000 (a day)');
  return ms;
}

/** The board routes take a person's token: a bot token there is a mix-up, told before anything is sent. */
function personToken(io: CliIo, file: string | undefined): string {
  const token = requiredToken(io, file, 'SVC_TOKEN');
  if (tokenKind(token) === 'bot')
    throw usageError(
      "the board webhooks are read with the token of a person who manages the boards, not a bot token (the bot's goes in SVC_BOT_TOKEN, with --bot)",
    );
  return token;
}

function botToken(io: CliIo, file: string | undefined): string {
  const token = requiredToken(io, file, 'SVC_BOT_TOKEN');
  const problem = botTokenProblem(token);
  if (problem !== undefined) throw usageError(`--bot needs the bot token in SVC_BOT_TOKEN or --bot-token-file: ${problem}`);
  return token;
}

/** Ids from --board and --boards-file, in order, once each; a bad one is a usage error that names its line. */
function boardIds(io: CliIo, given: readonly string[], file: string | undefined): string[] {
  const ids = [...given];
  if (file !== undefined) {
    readInputFile(io, file, 'boards file')
      .toString('utf8')
      .split(/\r?\n/)
      .forEach((raw, i) => {
        const line = raw.replace(/#.*/, '').trim();
        if (line === '') return;
        if (!isBoardId(line)) throw usageError(`${file} line ${i + 1} is not a board id`);
        ids.push(line);
      });
  }
  for (const id of given) if (!isBoardId(id)) throw usageError('--board takes a board id (no spaces around it, no control characters)');
  return [...new Set(ids)];
}
