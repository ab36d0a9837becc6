import { webhookSecretProblem } from '../../client/webhook-secret';
import type { DeliveryStore } from '../../dedup/delivery-store';
import type { ParkedDelivery, ParkingLot } from '../../dedup/parking-lot';
import { postgresStore } from '../../dedup/postgres-store';
import { redisStore } from '../../dedup/redis-store';
import { REPLAY_HEADER } from '../../receive/park';
import { CliError, usageError } from '../cli-error';
import type { CliIo } from '../cli-io';
import type { Command } from '../command';
import { formatFields, oneLine, printable, terminalJson } from '../format';
import { parseOptions } from '../parse-options';
import { postDelivery } from '../post-delivery';
import { requiredSecret } from '../read-input';
import { inboxCommand } from './inbox';

const help = `Usage: svc-webhooks parked <list | show <id> | replay <id | --all> | drop <id | --all>> [options]

Deliveries kept instead of lost: parked in the de-dup store (an attempt parkAfterMs after the
delivery first failed, or one that failed the schema under schemaPolicy 'park'), or with --inbox
the inbox's dead letters. A replay runs a parked delivery through your receiver's pipeline
exactly once: it is POSTed to --url, signed with the webhook secret as svc signs a delivery and
naming itself in X-Svc-Webhooks-Replay; a second replay is answered as a duplicate.

Subcommands:
  list             the parked deliveries, oldest first (id, webhook, kind, reason, attempts, last error)
  show <id>        one parked delivery: its headers, raw body, attempts and last error
  replay <id>      run it through the receiver at --url, once
  replay --all     replay every one not yet replayed, oldest first
  drop <id>        forget it for good (--all: every one)

Where they are (the store your webhook uses):
  --redis-url <url>     the Redis store (or REDIS_URL)
  --prefix <prefix>     the Redis store's key prefix (default svc-webhooks:)
  --postgres-url <url>  the PostgreSQL store (or DATABASE_URL)
  --table <name>        the PostgreSQL store's table (default svc_webhook_deliveries)
  --inbox               the inbox's dead letters instead (its Redis from --redis-url or REDIS_URL;
                        replay puts one back in its queue, as svc-webhooks inbox retry does)

Replay:
  --url <url>           the receiver's URL (POST), e.g. https://app.example.com/webhooks/board
  --secret-file <file>  the webhook secret (or SVC_BOARD_WEBHOOK_SECRET / SVC_BOT_WEBHOOK_SECRET)

  --json                print JSON
  -h, --help            show this help

A store in this process's memory (memoryStore) is reached only from your app: webhook.parked.

Examples:
  REDIS_URL=redis://127.0.0.1:6379 npx svc-webhooks parked list
  npx svc-webhooks parked replay 0f8e... --postgres-url postgres://app@db/app --url https://app.example.com/webhooks/board
`;

export const parkedCommand: Command = {
  name: 'parked',
  summary: 'list, show, replay or drop the deliveries parked before svc dropped them',
  help,
  async run(args, io) {
    const { values, positionals } = parseOptions('parked', args, {
      'redis-url': { type: 'string' },
      prefix: { type: 'string' },
      'postgres-url': { type: 'string' },
      table: { type: 'string' },
      inbox: { type: 'boolean' },
      url: { type: 'string' },
      'secret-file': { type: 'string' },
      all: { type: 'boolean' },
      json: { type: 'boolean' },
    });
    const [sub, id, ...extra] = positionals;
    const all = values.all === true;
    if (sub === undefined || !['list', 'show', 'replay', 'drop'].includes(sub))
      throw usageError('name a subcommand: list, show, replay or drop (see svc-webhooks parked --help)');
    if (extra.length > 0) throw usageError('unexpected argument (see svc-webhooks parked --help)');
    if (sub === 'list' && id !== undefined) throw usageError('list takes no delivery id');
    if (sub === 'show' && id === undefined) throw usageError('show needs a delivery id');
    if ((sub === 'replay' || sub === 'drop') && (id === undefined) === !all) throw usageError(`${sub} needs a delivery id or --all, not both`);
    if (all && sub !== 'replay' && sub !== 'drop') throw usageError('--all goes with replay or drop');
    if (values.inbox === true) {
      if (sub === 'drop' && all) throw usageError("the inbox's dead letters are dropped one at a time (drop <id>)");
      return inboxCommand.run(inboxArgs(args), io);
    }

    const store = openStore(io, values);
    const lot = store.parking!;
    const json = values.json === true;
    try {
      if (sub === 'list') return list(io, await lot.list(), json);
      if (sub === 'show') return show(io, await lot.get(id!), id!, json);
      if (sub === 'drop') return await drop(io, lot, all ? undefined : id!, json);
      if (values.url === undefined) throw usageError('replay needs --url: the receiver that runs the handlers');
      return await replay(io, lot, all ? undefined : id!, { url: values.url, secretFile: values['secret-file'], json });
    } finally {
      await Promise.resolve(store.close?.()).catch(() => undefined);
    }
  },
};

/** The same request for the inbox's dead letters: `replay` is the inbox's `retry`, and --inbox is dropped. */
function inboxArgs(args: readonly string[]): string[] {
  return args.filter((a) => a !== '--inbox').map((a) => (a === 'replay' ? 'retry' : a));
}

function openStore(io: CliIo, values: { 'redis-url'?: string; prefix?: string; 'postgres-url'?: string; table?: string }): DeliveryStore {
  const redis = values['redis-url'] ?? (values['postgres-url'] === undefined ? io.env.REDIS_URL : undefined);
  const postgres = values['postgres-url'] ?? (redis === undefined ? io.env.DATABASE_URL : undefined);
  if ((redis === undefined) === (postgres === undefined) || redis === '' || postgres === '')
    throw usageError('name the store: --redis-url (or REDIS_URL) or --postgres-url (or DATABASE_URL), one of them');
  if (postgres !== undefined && values.prefix !== undefined) throw usageError("--prefix is the Redis store's; the PostgreSQL store takes --table");
  if (redis !== undefined && values.table !== undefined) throw usageError("--table is the PostgreSQL store's; the Redis store takes --prefix");
  try {
    return redis !== undefined
      ? redisStore({ url: redis, commandTimeoutMs: 5000, ...(values.prefix === undefined ? {} : { prefix: values.prefix }) })
      : postgresStore({ connectionString: postgres!, commandTimeoutMs: 5000, ...(values.table === undefined ? {} : { table: values.table }) });
  } catch (err) {
    throw new CliError((err as Error).message.replace('svc-webhooks: ', ''));
  }
}

function summary({ body: _b, headers: _h, ...rest }: ParkedDelivery) {
  return rest;
}

function list(io: CliIo, parked: readonly ParkedDelivery[], json: boolean): number {
  if (json) {
    io.stdout.write(terminalJson(parked.map(summary)));
    return 0;
  }
  if (parked.length === 0) {
    io.stdout.write('nothing is parked\n');
    return 0;
  }
  // Ids, kinds and errors come from senders and handlers: shown without control characters.
  for (const p of parked)
    io.stdout.write(
      `${printable(p.id)}  ${p.webhook}  ${printable(p.kind)}  ${p.reason}  ${p.attempts} attempts  parked ${iso(p.parkedAt)}${p.replayedAt === undefined ? '' : `  replayed ${iso(p.replayedAt)}`}  ${oneLine(p.lastError).slice(0, 200)}\n`,
    );
  return 0;
}

function show(io: CliIo, parked: ParkedDelivery | undefined, id: string, json: boolean): number {
  if (parked === undefined) throw new CliError(`no parked delivery with id ${printable(id)}`);
  const body = new TextDecoder().decode(parked.body);
  if (json) {
    io.stdout.write(terminalJson({ ...parked, body }));
    return 0;
  }
  const rest = summary(parked);
  io.stdout.write(formatFields({ ...rest, parkedAt: iso(rest.parkedAt), firstFailedAt: iso(rest.firstFailedAt), replayedAt: iso(rest.replayedAt) }, ''));
  io.stdout.write(`headers\n${formatFields(parked.headers)}body\n${body.split('\n').map(printable).join('\n')}\n`);
  return 0;
}

async function drop(io: CliIo, lot: ParkingLot, id: string | undefined, json: boolean): Promise<number> {
  if (id !== undefined) {
    if (!(await lot.drop(id))) throw new CliError(`no parked delivery with id ${printable(id)}`);
    io.stdout.write(json ? terminalJson({ dropped: id }) : `dropped: ${printable(id)}\n`);
    return 0;
  }
  let count = 0;
  for (const p of await lot.list()) if (await lot.drop(p.id)) count++;
  io.stdout.write(json ? terminalJson({ dropped: count }) : `${count} parked deliver${count === 1 ? 'y' : 'ies'} dropped\n`);
  return 0;
}

interface ReplayTarget {
  readonly url: string;
  readonly secretFile: string | undefined;
  readonly json: boolean;
}

async function replay(io: CliIo, lot: ParkingLot, id: string | undefined, target: ReplayTarget): Promise<number> {
  const one = id === undefined ? undefined : await lot.get(id);
  if (id !== undefined && one === undefined) throw new CliError(`no parked delivery with id ${printable(id)}`);
  const waiting = one !== undefined ? [one] : (await lot.list()).filter((p) => p.replayedAt === undefined);
  const secrets = new Map<string, string>();
  const secretFor = (webhook: 'board' | 'bot') => {
    let secret = secrets.get(webhook);
    if (secret === undefined) {
      const envName = webhook === 'bot' ? 'SVC_BOT_WEBHOOK_SECRET' : 'SVC_BOARD_WEBHOOK_SECRET';
      secret = requiredSecret(io, { file: target.secretFile, envName: 'SVC_WEBHOOK_SECRET', webhookEnvName: envName });
      const problem = webhookSecretProblem(secret);
      if (problem !== undefined) throw usageError(`the webhook secret is not one svc would use: ${problem}`);
      secrets.set(webhook, secret);
    }
    return secret;
  };
  const results: Array<{ id: string; outcome: string; status?: number; code?: string }> = [];
  for (const p of waiting) {
    const delivery = { webhook: p.webhook, body: new TextDecoder().decode(p.body), id: p.id, kind: p.kind === '' ? undefined : p.kind };
    const answer = await postDelivery(io, { url: target.url, delivery, secret: secretFor(p.webhook), headers: { [REPLAY_HEADER]: p.id } });
    const outcome = answer.ok ? (answer.duplicate ? 'duplicate' : 'handled') : 'failed';
    results.push({
      id: p.id,
      outcome,
      ...(answer.status === undefined ? {} : { status: answer.status }),
      ...(answer.code === undefined ? {} : { code: answer.code }),
    });
    if (!target.json)
      io.stdout.write(
        answer.ok
          ? `${answer.duplicate ? 'already replayed (duplicate)' : 'replayed, handled'}: ${printable(p.id)}\n`
          : `replay failed: ${printable(p.id)}: ${answer.status ?? ''} ${answer.code ?? answer.error ?? ''} ${answer.message ?? ''}`.trimEnd() + '\n',
      );
  }
  if (target.json) io.stdout.write(terminalJson(results));
  else if (id === undefined) io.stdout.write(`${results.filter((r) => r.outcome !== 'failed').length} of ${results.length} replayed\n`);
  return results.some((r) => r.outcome === 'failed') ? 1 : 0;
}

function iso(ms: number | undefined): string {
  return ms === undefined ? '-' : new Date(ms).toISOString();
}
