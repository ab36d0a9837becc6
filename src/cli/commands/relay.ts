import { SPEC_BODY_BYTES } from '../../webhooks/webhook-options';
import { scrubbedLogger } from '../../internal/logging/webhook-loggers';
import { describeLoad, openStore } from '../../relay/relay-backend';
import { backendTarget } from '../relay-target';
import { relayIntake, type Intake } from '../../relay/relay-intake';
import { parseDuration, parseSize } from '../../relay/relay-options';
import { relaySecrets, type RelaySecrets } from '../../relay/relay-secrets';
import { startRelay } from '../../relay/relay-server';
import { isListenerName } from '../../relay/relay-tokens';
import type { WebhookKind } from '../../relay/relay-record';
import { CliError, usageError } from '../cli-error';
import type { CliIo } from '../cli-io';
import type { Command } from '../command';
import { printable } from '../format';
import { parseOptions, wholeNumber } from '../parse-options';
import { held, readInputFile } from '../read-input';
import { relayTokenCommand } from './relay-token';

const help = `Usage: svc-webhooks relay [options]
       svc-webhooks relay token create|revoke|list [<name>] [--data-dir <dir> | --redis-url <url>]

A public relay for local development: deploy it once where svc can reach it (https, behind your
TLS proxy), register its URL with svc, and developers run \`svc-webhooks listen\` on their laptops.
It verifies every delivery as a receiver does, stores it (fsync'd, or in Redis) before answering
svc 2xx, and streams it to every listener (Server-Sent Events), each with its own access token. A
listener that reconnects gets what it missed, within the retention.

svc delivers to:  /webhooks/board   (board webhooks)
                  /webhooks/bot     (the bot webhook; /webhooks/bots/<botId> with a map of bots)

Options:
  --board-secret-file <file>  the board webhook secret: one a line (several during a rotation), or a
                              JSON object of board id to secret(s) for many boards
                              (or set SVC_BOARD_WEBHOOK_SECRET)
  --bot-secret-file <file>    the same for the bot webhook (or set SVC_BOT_WEBHOOK_SECRET)
  --host <address>            address to listen on (default 0.0.0.0)
  --port <n>                  port (default PORT, else 8080; 0: any free port)
  --data-dir <dir>            where deliveries and token hashes are kept (default ./relay-data)
  --redis-url <url>           keep them in Redis instead (or REDIS_URL); --redis-prefix to name the keys
  --retention <duration>      how long deliveries are kept: 90m, 24h, 2d (default 24h)
  --max-deliveries <n>        deliveries kept at most, the oldest dropped first (default 10000)
  --mirror <listener>         answer svc with what this listener's local receiver answers
                              (504 when it does not within 9 s; the delivery is stored anyway)
  --max-body-bytes <size>     largest body accepted, as a receiver's default (default 512kb)
  --max-streams <n>           streams open at once per listener token (default 4)
  --max-buffered <n>          events the relay writes to a listener before it waits for it to read
                              (default 256)
  --drain-timeout <duration>  a listener that reads none of them for this long is cut off; it resumes
                              from its cursor when it reconnects (default 30s)
  -h, --help                  show this help

Secrets are read from files or the environment only, never from the command line.

Examples:
  SVC_BOARD_WEBHOOK_SECRET="$(cat board-secret.txt)" npx svc-webhooks relay --data-dir /var/lib/relay
  npx svc-webhooks relay token create alice --data-dir /var/lib/relay
`;

const OPTIONS = {
  host: { type: 'string' },
  port: { type: 'string' },
  'data-dir': { type: 'string' },
  'redis-url': { type: 'string' },
  'redis-prefix': { type: 'string' },
  retention: { type: 'string' },
  'max-deliveries': { type: 'string' },
  'board-secret-file': { type: 'string' },
  'bot-secret-file': { type: 'string' },
  mirror: { type: 'string' },
  'max-body-bytes': { type: 'string' },
  'max-streams': { type: 'string' },
  'max-buffered': { type: 'string' },
  'drain-timeout': { type: 'string' },
} as const;

function secretsOf(io: CliIo, webhook: WebhookKind, file: string | undefined): RelaySecrets | undefined {
  const envName = webhook === 'board' ? 'SVC_BOARD_WEBHOOK_SECRET' : 'SVC_BOT_WEBHOOK_SECRET';
  const text = file === undefined ? io.env[envName] : readInputFile(io, file, `${webhook} secret file`).toString('utf8');
  if (text === undefined || text === '') return undefined;
  try {
    const secrets = relaySecrets(webhook, text, scrubbedLogger(stderrLogger(io), { webhook }, []));
    for (const value of secrets.values) held(io, value);
    return secrets;
  } catch (err) {
    // The messages of the secret checks name a length or an id, never a secret.
    throw usageError(`${file === undefined ? envName : `--${webhook}-secret-file`}: ${(err as Error).message.replace(/^svc-webhooks: /, '')}`);
  }
}

/** The secret lookup's rare failure lines, on standard error. */
function stderrLogger(io: CliIo): { info: (...a: unknown[]) => void; warn: (...a: unknown[]) => void; error: (...a: unknown[]) => void } {
  const write = (...args: unknown[]): void => void io.stderr.write(`${args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ')}\n`);
  return { info: () => undefined, warn: write, error: write };
}

function readPort(io: CliIo, value: string | undefined): number {
  const text = value ?? io.env.PORT ?? '8080';
  const port = Number(text);
  if (!/^\d{1,5}$/.test(text) || port > 65535) throw usageError('--port takes a whole number from 0 to 65535');
  return port;
}

/** How one flag's value is read: its reader, its name, its default, and what it must be. */
interface FlagReader<T> {
  readonly read: (text: string) => T | undefined;
  readonly name: string;
  readonly fallback: T;
  readonly what: string;
}

function option<T>(value: string | undefined, { read, name, fallback, what }: FlagReader<T>): T {
  if (value === undefined) return fallback;
  const read_ = read(value);
  if (read_ === undefined) throw usageError(`${name} must be ${what}`);
  return read_;
}

async function serve(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOptions('relay', args, OPTIONS);
  if (positionals.length > 0) throw usageError('relay takes no arguments besides its options and the token subcommand (see svc-webhooks relay --help)');
  if (io.interrupted === undefined) throw usageError('relay runs until interrupted, which needs a terminal or a process that can be');
  const retentionMs = option(values.retention, {
    read: parseDuration,
    name: '--retention',
    fallback: 24 * 3_600_000,
    what: 'a duration such as 90m, 24h or 2d',
  });
  const maxBodyBytes = option(values['max-body-bytes'], {
    read: parseSize,
    name: '--max-body-bytes',
    fallback: 512 * 1024,
    what: 'a size such as 512kb or 1mb',
  });
  if (maxBodyBytes < SPEC_BODY_BYTES) throw usageError('--max-body-bytes must be at least 256kb, the body size svc may send');
  const maxDeliveries = wholeNumber(values['max-deliveries'], '--max-deliveries', { min: 1, max: 10_000_000 }) ?? 10_000;
  const maxPerListener = wholeNumber(values['max-streams'], '--max-streams', { min: 1, max: 1000 }) ?? 4;
  const maxBuffered = wholeNumber(values['max-buffered'], '--max-buffered', { min: 1, max: 100_000 }) ?? 256;
  const drainTimeoutMs = option(values['drain-timeout'], {
    read: (text) => {
      const ms = parseDuration(text);
      return ms !== undefined && ms >= 100 ? ms : undefined;
    },
    name: '--drain-timeout',
    fallback: 30_000,
    what: 'a duration of at least 100ms, such as 5s or 1m',
  });
  if (values.mirror !== undefined && !isListenerName(values.mirror)) throw usageError('--mirror takes a listener name, as given to relay token create');
  const intakes: Intake[] = [];
  for (const webhook of ['board', 'bot'] as const) {
    const secrets = secretsOf(io, webhook, values[`${webhook}-secret-file`]);
    if (secrets !== undefined) intakes.push(relayIntake({ webhook, secrets, maxBodyBytes, toleranceSeconds: 300 }));
  }
  if (intakes.length === 0)
    throw usageError('no webhook secret: pass --board-secret-file or --bot-secret-file, or set SVC_BOARD_WEBHOOK_SECRET or SVC_BOT_WEBHOOK_SECRET');
  const target = backendTarget(io, values);
  const port = readPort(io, values.port);
  const log = (line: string): void => void io.stdout.write(`${new Date().toISOString()} ${printable(line)}\n`);
  let opened;
  try {
    opened = await openStore(target, { retentionMs, maxDeliveries }, Date.now());
  } catch (err) {
    throw new CliError(`cannot open the store: ${(err as Error).message}`);
  }
  if (opened.report !== undefined) for (const line of describeLoad(opened.report)) io.stdout.write(`${printable(line)}\n`);
  let relay;
  try {
    relay = await startRelay({
      host: values.host ?? '0.0.0.0',
      port,
      intakes,
      store: opened.store,
      tokens: opened.tokens,
      mirror: values.mirror,
      limits: { maxPerListener, maxBuffered, drainTimeoutMs, heartbeatMs: 15_000 },
      housekeepingMs: 2_000,
      log,
    });
  } catch (err) {
    await opened.store.close();
    throw new CliError(`could not listen: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  io.stdout.write(
    [
      `relay listening on ${relay.url}`,
      ...intakes.map((i) => `  ${i.webhook.padEnd(5)} webhook at ${i.path}`),
      `  store ${opened.store.description}, deliveries kept ${values.retention ?? '24h'} (at most ${maxDeliveries})`,
      values.mirror === undefined ? '' : `  svc is answered with listener ${values.mirror}'s answers`,
      '',
    ]
      .filter((line, i, all) => line !== '' || i === all.length - 1)
      .join('\n'),
  );
  await io.interrupted();
  await relay.close();
  io.stdout.write('relay stopped\n');
  return 0;
}

export const relayCommand: Command = {
  name: 'relay',
  summary: 'run a public relay that verifies, stores and streams deliveries to developers (listen)',
  help,
  run(args, io) {
    if (args[0] === 'token') return relayTokenCommand(args.slice(1), io);
    return serve(args, io);
  },
};
