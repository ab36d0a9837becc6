import { webhookSecretProblem } from '../../client/webhook-secret';
import { CliError, usageError } from '../cli-error';
import type { CliIo } from '../cli-io';
import type { Command } from '../command';
import { formatDuration, printable } from '../format';
import { eventEdits } from '../event-edits';
import { loadDelivery } from '../load-delivery';
import { describeOutcome, failureSummary } from '../outcome-lines';
import { oneOf, parseOptions, positiveNumber, wholeMilliseconds } from '../parse-options';
import { postDelivery, SENDER_TIMEOUT_MS, type AttemptOutcome, type DeliveryTarget } from '../post-delivery';
import { startProgress } from '../progress';
import { optionalSecret, requiredSecret } from '../read-input';
import { retryDelays } from '../retry-schedule';
import { batchOf, copiesOf, describeBatch, sendBatch, sendOrder } from '../send-batch';
import { sendHints } from '../send-hints';

const help = `Usage: svc-webhooks send <example|file.json> --url <url> [options]

POST a signed delivery to a receiver, as svc's sender does: the same headers
(signature, timestamp, delivery id, event, user agent, version), a 10 s deadline,
and redirects not followed (a 3xx counts as a failure).

<example> is a board event type (task.created, ping, ...) or a bot event kind
(messageCreate, messageCreate.command, botCallback, ...), sent with a fresh id.
A .json file is sent byte for byte (use --fresh to give it a new id); --set, --board
and --id change the event first (it is then sent as compact JSON).

Options:
  --url <url>            where to POST (http://127.0.0.1:3000/webhooks/board)
  --secret-file <file>   read the webhook secret from a file (or set SVC_BOARD_WEBHOOK_SECRET
                         or SVC_BOT_WEBHOOK_SECRET, as the receiver reads it, or
                         SVC_WEBHOOK_SECRET)
  --secret <secret>      the webhook secret on the command line: only for development
                         secrets, as it stays in shell history and process lists
  --webhook board|bot    which webhook a file is for (read from the body by default)
  --fresh                give a file's event a new id (and a bot update createdAt = now)
  --set <path>=<value>   set a field, by a dot path (task.title="Fix login", task.label_ids.0=...);
                         the value is JSON when it parses (3, true, null, {...}, "3"), else
                         text; objects missing or null on the path are created; repeatable
  --board <id>           the board id, wherever the event carries it (board.id, task.board_id,
                         a moved_board change; a bot update's boardId): a lower-case UUID
  --id <uuid>            a fixed delivery id, to replay a delivery (not with --count or --fresh)
  --count <n>            send n deliveries of the event (1 to 10000), each with its own id
                         and, for a board event, the next sequence number
  --shuffle              with --count: send them in a random order
  --duplicates <f>       with --count: send this fraction (0 to 1) of them a second time
  --seed <n>             the seed of --shuffle and --duplicates (printed when drawn)
  --retry                on failure, retry on svc's schedule: 1, 2, 4 ... min,
                         at most 1 h apart, for one day
  --fast <factor>        run the schedule <factor> times faster (--fast 600: 1 min = 0.1 s)
  --timeout <ms>         the deadline per attempt (default 10000, as svc)
  -h, --help             show this help

Every attempt's outcome is printed: status, the receiver's error code and message,
duration; a failed delivery ends with hints for the usual mistakes.
An answer {"ok":true,"duplicate":true} is shown as a duplicate; --count ends with a
summary: sent, accepted, duplicates, refused by status.
Exits 0 when an attempt got a 2xx (with --count: every send), 1 when the delivery
failed, 2 on a usage error.

Examples:
  npx svc-webhooks send task.created --url http://127.0.0.1:3000/webhooks/board --secret dev-board-webhook-secret-change-me
  npx svc-webhooks send messageCreate.command --url http://127.0.0.1:3000/webhooks/bot --secret dev-bot-webhook-secret-change-me
  npx svc-webhooks send task.created --set task.title="Fix login" --set task.estimate=3 --url ...
  npx svc-webhooks send task.updated --count 20 --shuffle --duplicates 0.2 --seed 7 --url ...
  SVC_WEBHOOK_SECRET="$(cat board-secret.txt)" npx svc-webhooks send ./captured.json \\
    --url https://staging.example.com/webhooks/board --retry --fast 600
`;

function checkUrl(url: string | undefined): string {
  if (url === undefined) throw usageError('--url is required: where to POST the delivery');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw usageError('--url must be an absolute http(s) URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw usageError('--url must be an absolute http(s) URL');
  // fetch refuses such a URL on every attempt, and its error would show the password.
  if (parsed.username !== '' || parsed.password !== '') throw usageError('--url must not carry a user name or password');
  return url;
}

/** A delivery to send: where, what, with which secret; with svc's retries or once; how much faster than svc waits. */
interface SendPlan extends DeliveryTarget {
  readonly retry: boolean;
  readonly fast: number;
}

async function deliver(io: CliIo, plan: SendPlan): Promise<number> {
  const { url, retry, fast } = plan;
  const delays = retry ? retryDelays() : [];
  const total = delays.length + 1;
  let last: AttemptOutcome | undefined;
  let svcTime = 0;
  for (let attempt = 1; attempt <= total; attempt++) {
    const stop = startProgress(io, `attempt ${attempt}: waiting for the receiver`);
    last = await postDelivery(io, plan).finally(stop);
    // Where the attempt sits on svc's schedule, whatever --fast does to the real waits.
    const label = retry ? `attempt ${attempt}/${total} (+${svcTime === 0 ? '0' : formatDuration(svcTime)})` : 'attempt 1';
    io.stdout.write(`${label}: ${printable(describeOutcome(last))}\n`);
    if (last.message !== undefined) io.stdout.write(`  the receiver says: ${last.message}\n`);
    if (last.ok) {
      const duplicate = last.duplicate ? ' (a duplicate: the receiver had this delivery id already)' : '';
      io.stdout.write(`delivered${attempt > 1 ? ` on attempt ${attempt}` : ''}${duplicate}\n`);
      return 0;
    }
    const delay = delays[attempt - 1];
    if (delay === undefined) break;
    const real = delay / fast;
    const scaled = fast === 1 ? '' : ` (${formatDuration(real)} at --fast ${fast})`;
    io.stdout.write(`  retrying in ${formatDuration(delay)}${scaled}\n`);
    const stopWait = startProgress(io, `waiting ${formatDuration(delay)} before attempt ${attempt + 1}`);
    await io.sleep(real).finally(stopWait);
    svcTime += delay;
  }
  for (const hint of sendHints(last!, url)) io.stdout.write(`hint: ${hint}\n`);
  const why = failureSummary(last!);
  throw new CliError(retry ? `the delivery failed: gave up after ${total} attempts over a day; last: ${why}` : `the delivery failed: ${why}`);
}

export const sendCommand: Command = {
  name: 'send',
  summary: 'POST a signed example or JSON file to a receiver, like svc (optionally with retries)',
  help,
  async run(args, io) {
    const { values, positionals } = parseOptions('send', args, {
      url: { type: 'string' },
      secret: { type: 'string' },
      'secret-file': { type: 'string' },
      webhook: { type: 'string' },
      fresh: { type: 'boolean' },
      retry: { type: 'boolean' },
      fast: { type: 'string' },
      timeout: { type: 'string' },
      set: { type: 'string', multiple: true },
      board: { type: 'string' },
      id: { type: 'string' },
      count: { type: 'string' },
      shuffle: { type: 'boolean' },
      duplicates: { type: 'string' },
      seed: { type: 'string' },
    });
    if (positionals.length !== 1) throw usageError('send takes one example name or .json file (see svc-webhooks send --help)');
    const url = checkUrl(values.url);
    const webhook = oneOf(values.webhook, ['board', 'bot'] as const, '--webhook');
    // The webhook's own variable is known once the delivery is: read it only when nothing else gives a secret.
    const given = optionalSecret(io, { value: values.secret, file: values['secret-file'], envName: 'SVC_WEBHOOK_SECRET' });
    const fast = positiveNumber(values.fast, '--fast') ?? 1;
    if (values.fast !== undefined && !values.retry) throw usageError('--fast scales the retry schedule; use it with --retry');
    const timeoutMs = wholeMilliseconds(values.timeout, '--timeout') ?? SENDER_TIMEOUT_MS;
    const edits = eventEdits(values);
    const batch = batchOf(values);
    if (edits.id !== undefined && values.fresh) throw usageError('--fresh gives the event a new id and --id a fixed one: use one of them');
    if (batch !== undefined && values.retry) throw usageError("--retry follows one delivery through svc's schedule; not with --count");
    const delivery = loadDelivery(io, positionals[0]!, { webhook, fresh: values.fresh === true, edits });
    const secret =
      given ??
      requiredSecret(io, {
        value: undefined,
        envName: 'SVC_WEBHOOK_SECRET',
        webhookEnvName: delivery.webhook === 'bot' ? 'SVC_BOT_WEBHOOK_SECRET' : 'SVC_BOARD_WEBHOOK_SECRET',
      });
    const problem = webhookSecretProblem(secret);
    if (problem !== undefined) throw usageError(`the webhook secret is not one svc would use: ${problem}`);
    if (batch !== undefined) {
      if (delivery.payload === undefined) throw usageError(`--count needs a JSON object to give each delivery its own id, and ${positionals[0]!} is not one`);
      io.stdout.write(`POST ${printable(`${url}: ${describeBatch(delivery, batch)}`)}\n`);
      return sendBatch(io, copiesOf({ ...delivery, payload: delivery.payload }, batch.count), sendOrder(batch), { url, secret, timeoutMs });
    }
    // The file chose its id and type: shown without control characters.
    io.stdout.write(`POST ${printable(`${url}: ${delivery.webhook} ${delivery.kind ?? 'delivery'}, id ${delivery.id ?? '(none)'}`)}\n`);
    return deliver(io, { url, delivery, secret, retry: values.retry === true, fast, timeoutMs });
  },
};
