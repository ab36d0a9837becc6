import type { Redis } from 'ioredis';
import { DeadLetters, type DeadLetter } from '../../inbox/dead-letters';
import { requireQueuePackages } from '../../inbox/redis-connection';
import { CliError, usageError } from '../cli-error';
import type { CliIo } from '../cli-io';
import type { Command } from '../command';
import { formatFields, oneLine, printable, terminalJson } from '../format';
import { parseOptions } from '../parse-options';

const help = `Usage: svc-webhooks inbox <list | show <id> | retry <id | --all> | drop <id>> [options]

Manage the inbox's dead letters: deliveries whose handlers failed for the whole retry window.

Subcommands:
  list             list the dead letters (delivery id, webhook, kind, attempts, last error)
  show <id>        print one dead letter: its headers, raw body, attempts and last error
  retry <id>       put a dead letter back in its queue, with a fresh retry window
  retry --all      retry every dead letter
  drop <id>        delete a dead letter for good

Options:
  --redis-url <url>  the inbox's Redis (or REDIS_URL)
  --prefix <name>    the inbox's key prefix (default svc-webhooks)
  --all              with retry: every dead letter
  --json             print JSON
  -h, --help         show this help

Example:
  REDIS_URL=redis://127.0.0.1:6379 npx svc-webhooks inbox list
`;

export const inboxCommand: Command = {
  name: 'inbox',
  summary: "list, show, retry or drop the inbox's dead letters",
  help,
  async run(args, io) {
    const { values, positionals } = parseOptions('inbox', args, {
      'redis-url': { type: 'string' },
      prefix: { type: 'string' },
      all: { type: 'boolean' },
      json: { type: 'boolean' },
    });
    const [sub, id, ...extra] = positionals;
    const all = values.all === true;
    if (sub === undefined || !['list', 'show', 'retry', 'drop'].includes(sub))
      throw usageError('name a subcommand: list, show, retry or drop (see svc-webhooks inbox --help)');
    if (extra.length > 0) throw usageError('unexpected argument (see svc-webhooks inbox --help)');
    if (sub === 'list' && id !== undefined) throw usageError('list takes no delivery id');
    if ((sub === 'show' || sub === 'drop') && id === undefined) throw usageError(`${sub} needs a delivery id`);
    if (sub === 'retry' && (id === undefined) === !all) throw usageError('retry needs a delivery id or --all, not both');
    if (all && sub !== 'retry') throw usageError('--all goes with retry only');
    const url = values['redis-url'] ?? io.env.REDIS_URL;
    if (url === undefined || url === '') throw usageError("name the inbox's Redis with --redis-url or REDIS_URL");
    const prefix = values.prefix ?? 'svc-webhooks';
    const json = values.json === true;

    try {
      requireQueuePackages();
    } catch (err) {
      throw new CliError((err as Error).message.replace('svc-webhooks: ', ''));
    }
    const connection = await connect(url);
    const letters = new DeadLetters(connection, prefix);
    try {
      if (sub === 'list') return list(io, await letters.list(), json);
      if (sub === 'show') return show(io, await letters.show(id!), id!, json);
      if (sub === 'retry' && all) {
        const count = await letters.retryAll();
        io.stdout.write(json ? terminalJson({ retried: count }) : `${count} dead letter${count === 1 ? '' : 's'} put back in the inbox\n`);
        return 0;
      }
      const done = sub === 'retry' ? await letters.retry(id!) : await letters.drop(id!);
      if (!done) throw new CliError(`no dead letter with delivery id ${id}`);
      io.stdout.write(
        json
          ? terminalJson({ [sub === 'retry' ? 'retried' : 'dropped']: id })
          : `${sub === 'retry' ? 'put back in the inbox' : 'dropped'}: ${printable(id!)}\n`,
      );
      return 0;
    } finally {
      await letters.close().catch(() => undefined);
      connection.disconnect();
    }
  },
};

function list(io: CliIo, letters: readonly DeadLetter[], json: boolean): number {
  if (json) {
    io.stdout.write(terminalJson(letters.map(({ body: _b, headers: _h, ...summary }) => summary)));
    return 0;
  }
  if (letters.length === 0) {
    io.stdout.write('no dead letters\n');
    return 0;
  }
  // Ids, kinds and errors come from senders and handlers: shown without control characters.
  for (const l of letters)
    io.stdout.write(
      `${printable(l.deliveryId)}  ${l.webhook}  ${printable(l.kind)}  ${l.attempts} attempts  failed ${iso(l.failedAt)}  ${oneLine(l.lastError).slice(0, 200)}\n`,
    );
  return 0;
}

function show(io: CliIo, letter: DeadLetter | undefined, id: string, json: boolean): number {
  if (letter === undefined) throw new CliError(`no dead letter with delivery id ${id}`);
  if (json) {
    io.stdout.write(terminalJson(letter));
    return 0;
  }
  const { body, headers, ...rest } = letter;
  io.stdout.write(formatFields({ ...rest, receivedAt: iso(rest.receivedAt), failedAt: iso(rest.failedAt) }, ''));
  io.stdout.write(`headers\n${formatFields(headers)}body\n${body.split('\n').map(printable).join('\n')}\n`);
  return 0;
}

function iso(ms: number | undefined): string {
  return ms === undefined ? '-' : new Date(ms).toISOString();
}

/** Connects once, failing within seconds with a message that says which Redis (never its password) and why. */
async function connect(url: string): Promise<Redis> {
  let where: string;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new Error('not redis');
    where = `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    throw usageError('--redis-url must be a redis:// or rediss:// URL');
  }
  const { Redis: Client } = require('ioredis') as typeof import('ioredis');
  const client = new Client(url, { lazyConnect: true, connectTimeout: 3000, maxRetriesPerRequest: null, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    client.disconnect();
    const reason = err instanceof Error ? err.message : String(err);
    throw new CliError(`cannot reach Redis at ${where} (${reason}); is it running, and is --redis-url or REDIS_URL right?`);
  }
  return client;
}
