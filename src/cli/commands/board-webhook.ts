import { webhookUrlProblem } from '../../client/webhook-url';
import { CliError, usageError } from '../cli-error';
import type { Command } from '../command';
import { exactText, formatFields, printable, terminalJson, withoutCredentials } from '../format';
import { oneOf, parseOptions } from '../parse-options';
import { withProgress } from '../progress';
import { optionalSecret, requiredSecret } from '../read-input';
import { reenable } from './board-webhook-reenable';
import { refuseSetOnlyOptions, SETUP_OPTIONS, setupClient } from '../setup-client';

const help = `Usage: svc-webhooks board-webhook set|get|delete|ping --board <id> [options]
       svc-webhooks board-webhook reenable <id> --url <url> [--secret-file <file>] [options]

Manage a board's webhook through svc's setup routes (/api/boards/{id}/webhook), as a
person with MANAGE_BOARD on the board and MANAGE_INTEGRATIONS in the workspace
(Business plan or above). The token is read from SVC_TOKEN or --token-file, and sent
only in the Authorization header; it is never accepted on the command line.

  set      register (or replace, or re-enable) the webhook: --url, and --secret-file
           (or SVC_BOARD_WEBHOOK_SECRET), or none: then svc generates a secret, which is
           printed this once only
  get      print the webhook's state
  delete   remove the webhook; svc marks its queue failed
  ping     have svc send a ping event now and report your receiver's answer
           (at most once per 10 seconds per board)
  reenable re-enable a webhook svc disabled: svc must hold the URL given with --url
           (scheme, host, port and path; the query is not compared), else nothing is
           sent and the URL svc holds is printed; svc's ping must reach your receiver
           (a 429 is waited out once); then one PUT of that URL with your receiver's
           secret (--secret-file or SVC_BOARD_WEBHOOK_SECRET; required, so svc never
           generates a new one). Exit 0 re-enabled (or not disabled), 1 not (another
           URL, no --url, the ping failed), 3 svc could not be reached

Options:
  --board <id>           the board id
  --base-url <url>       svc's base address (or SVC_BASE_URL)
  --token-file <file>    read the token from a file (default: SVC_TOKEN)
  --url <url>            set: the https URL svc delivers to (public address only);
                         reenable: the URL svc must hold, or nothing is PUT
  --secret-file <file>   set, reenable: read the webhook secret (16 to 256 characters)
                         from a file (or set SVC_BOARD_WEBHOOK_SECRET, as the receiver reads it,
                         or SVC_WEBHOOK_SECRET); --secret is refused, as
                         a value on the command line shows in process lists and shell history
  --json                 print the answer as JSON
  --allow-insecure-http  send the token over plain http:// to a host other than this
                         machine (by default http:// is only for a local server)
  -h, --help             show this help

The url and secret are checked locally before anything is sent.

Example:
  SVC_TOKEN=... npx svc-webhooks board-webhook set --base-url https://acme.svc.example.com \\
    --board 88f7b448-895e-49f0-9eca-ab4ee416bab1 --url https://hooks.example.com/webhooks/board
`;

const TOKEN_ENV = 'SVC_TOKEN';

export const boardWebhookCommand: Command = {
  name: 'board-webhook',
  summary: 'set, get, delete, ping or re-enable a board webhook (token from SVC_TOKEN)',
  help,
  async run(args, io) {
    const { values, positionals } = parseOptions('board-webhook', args, {
      board: { type: 'string' },
      ...SETUP_OPTIONS,
    });
    const takesId = positionals[0] === 'reenable' && positionals.length === 2;
    if (positionals.length !== 1 && !takesId)
      throw usageError('board-webhook takes one action: set, get, delete, ping or reenable (see svc-webhooks board-webhook --help)');
    const action = oneOf(positionals[0], ['set', 'get', 'delete', 'ping', 'reenable'] as const, 'the action')!;
    if (action === 'reenable') {
      const problem = values.url === undefined ? undefined : webhookUrlProblem(values.url);
      if (problem !== undefined) throw usageError(`--url must be the https URL svc should deliver to (svc holds no other): ${problem}`);
    } else refuseSetOnlyOptions('board-webhook', action, values);
    if (takesId && values.board !== undefined) throw usageError('name the board once: reenable <id> or --board <id>');
    const board = takesId ? positionals[1] : values.board;
    if (board === undefined || board.trim() === '')
      throw usageError(action === 'reenable' ? 'reenable needs the board id: board-webhook reenable <id>' : '--board <id> is required');
    const { client } = setupClient(io, {
      baseUrl: values['base-url'],
      tokenFile: values['token-file'],
      tokenEnv: TOKEN_ENV,
      allowInsecureHttp: values['allow-insecure-http'] === true,
    });
    const json = values.json === true;
    const print = (value: unknown): void => void io.stdout.write(terminalJson(value));

    if (action === 'set') {
      if (values.url === undefined) throw usageError('board-webhook set needs --url <https url>');
      const secret = optionalSecret(io, { file: values['secret-file'], envName: 'SVC_WEBHOOK_SECRET', webhookEnvName: 'SVC_BOARD_WEBHOOK_SECRET' });
      const input = secret === undefined ? { url: values.url } : { url: values.url, secret };
      const { webhook, generatedSecret } = await withProgress(io, 'setting the board webhook', () => client.setBoardWebhook(board, input));
      if (json)
        print(generatedSecret === undefined ? { webhook: withoutCredentials(webhook) } : { webhook: withoutCredentials(webhook), secret: generatedSecret });
      else {
        io.stdout.write(`board webhook set for board ${board}:\n${formatFields(webhook)}`);
        if (generatedSecret !== undefined) {
          // svc generates base64url; anything a terminal would act on is shown escaped, never sent to it.
          const { shown, escaped } = exactText(generatedSecret);
          const how = escaped ? ' It holds control characters, which svc never generates: shown as a JSON string, with escapes.' : '';
          io.stdout.write(`\nsecret generated by svc, shown this once only; store it now (svc never returns it again):${how}\n${shown}\n`);
        }
      }
      return 0;
    }
    if (action === 'get') {
      const state = await withProgress(io, 'reading the board webhook', () => client.getBoardWebhook(board));
      if (json) print(withoutCredentials(state));
      else io.stdout.write(state === null ? `no webhook is set for board ${board}\n` : `board webhook of board ${board}:\n${formatFields(state)}`);
      return 0;
    }
    if (action === 'delete') {
      await withProgress(io, 'deleting the board webhook', () => client.deleteBoardWebhook(board));
      io.stdout.write(json ? '{ "deleted": true }\n' : `board webhook of board ${board} deleted; svc marked its queue failed\n`);
      return 0;
    }
    if (action === 'reenable') {
      const secret = requiredSecret(io, { file: values['secret-file'], envName: 'SVC_WEBHOOK_SECRET', webhookEnvName: 'SVC_BOARD_WEBHOOK_SECRET' });
      return reenable(io, { client, board, secret, expectedUrl: values.url, json });
    }
    const result = await withProgress(io, 'pinging: svc delivers a ping event to your receiver', () => client.pingBoardWebhook(board));
    if (json) print(withoutCredentials(result));
    if (!result.ok) {
      const status = typeof result.status === 'number' && result.status > 0 ? `the receiver answered ${result.status}` : 'the receiver was not reached';
      const error = typeof result.error === 'string' && result.error !== '' ? `: ${result.error}` : '';
      throw new CliError(`ping failed: ${status}${error}`);
    }
    if (!json) io.stdout.write(`ping delivered: the receiver answered ${printable(String(result.status))}\n`);
    return 0;
  },
};
