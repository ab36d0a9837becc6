import { resolve } from 'node:path';
import { CursorFile } from '../../relay/cursor-file';
import { forward, type ForwardTarget, type Signing } from '../../relay/forward';
import { listen, RelayRefused, type ListenFilter } from '../../relay/listen-loop';
import { isLoopbackHost } from '../../relay/relay-options';
import type { StoredDelivery } from '../../relay/relay-record';
import { CliError, usageError } from '../cli-error';
import type { CliIo } from '../cli-io';
import type { Command } from '../command';
import { printable } from '../format';
import { count, deliveryLine, newTally, Notices, summaryLine } from '../listen-lines';
import { parseOptions } from '../parse-options';
import { optionalSecret, requiredToken } from '../read-input';

const help = `Usage: svc-webhooks listen --relay <url> --to <local url> [options]
       svc-webhooks listen --relay <url> --to <local url> --replay <delivery id | sequence>

Receive the deliveries a relay (svc-webhooks relay) stored for you and hand each to your local
receiver, re-signed with your local development secret, with svc's delivery id, event and the
body's exact bytes, and a fresh X-Svc-Timestamp (so that deliveries caught up after a sleep pass
the receiver's 300 s tolerance). One line per delivery; a summary on Ctrl-C.

The cursor (the last delivery handed on) is kept in a file: a listener that restarts, or whose
laptop slept, gets exactly what it missed, within the relay's retention. While the local receiver
does not answer, the cursor stays and the delivery is retried; any answer moves it on.

Options:
  --relay <url>          the relay's address (https://relay.example.com)
  --to <url>             the local receiver; a URL with no path gets /webhooks/board or
                         /webhooks/bot, as the delivery's webhook
  --bot-to <url>         another URL for bot deliveries
  --token-file <file>    the access token (or set SVC_RELAY_TOKEN); never on the command line
  --secret-file <file>   the local development secret, for both webhooks (or set
                         SVC_BOARD_WEBHOOK_SECRET, SVC_BOT_WEBHOOK_SECRET or SVC_WEBHOOK_SECRET,
                         as your receiver reads it)
  --raw                  send svc's own headers and signature instead (you hold the real secret;
                         a delivery older than 300 s is then refused by the receiver)
  --type <type>          only this event type or kind (repeatable); others are skipped
  --board <id>           only board deliveries of this board (repeatable)
  --cursor-file <file>   where the cursor is kept (default .svc-webhooks-listen.json)
  --from-start           with no cursor yet: every delivery the relay keeps, not only new ones
  --replay <ref>         send one stored delivery again (a duplicate, as svc's retry) and exit
  --allow-remote-target  let --to name another machine than this one
  --json                 one JSON object a line
  -h, --help             show this help

Exits 0 when stopped with Ctrl-C (--replay: when the receiver answered 2xx), 1 when the relay
refuses the token or the delivery to replay is not kept, 2 on a usage error.
`;

const OPTIONS = {
  relay: { type: 'string' },
  to: { type: 'string' },
  'bot-to': { type: 'string' },
  'token-file': { type: 'string' },
  'secret-file': { type: 'string' },
  raw: { type: 'boolean' },
  type: { type: 'string', multiple: true },
  board: { type: 'string', multiple: true },
  'cursor-file': { type: 'string' },
  'from-start': { type: 'boolean' },
  replay: { type: 'string' },
  'allow-remote-target': { type: 'boolean' },
  json: { type: 'boolean' },
} as const;

function httpUrl(value: string | undefined, name: string): URL {
  if (value === undefined) throw usageError(`${name} is required (see svc-webhooks listen --help)`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw usageError(`${name} must be an absolute http(s) URL`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '')
    throw usageError(`${name} must be an absolute http(s) URL without a user name or password`);
  return url;
}

/** The local receiver's URL for one webhook: as given, or with the receivers' default path. */
function localUrl(url: URL, path: string, allowRemote: boolean, name: string): string {
  if (!allowRemote && !isLoopbackHost(url.hostname))
    throw usageError(`${name} must be on this machine (localhost, 127.0.0.1, ::1): deliveries carry real data; add --allow-remote-target to send elsewhere`);
  return url.pathname === '/' ? new URL(path, url).href : url.href;
}

function signingOf(io: CliIo, raw: boolean, file: string | undefined): Signing {
  if (raw) {
    if (file !== undefined) throw usageError("--raw sends svc's own signature: it takes no --secret-file");
    return { raw: true };
  }
  const both = optionalSecret(io, { file, envName: 'SVC_WEBHOOK_SECRET' });
  const board = both ?? optionalSecret(io, { envName: 'SVC_BOARD_WEBHOOK_SECRET' });
  const bot = both ?? optionalSecret(io, { envName: 'SVC_BOT_WEBHOOK_SECRET' });
  if (board === undefined && bot === undefined)
    throw usageError(
      'the local development secret is required: pass --secret-file or set SVC_BOARD_WEBHOOK_SECRET, SVC_BOT_WEBHOOK_SECRET or SVC_WEBHOOK_SECRET (or --raw)',
    );
  return { raw: false, board, bot };
}

/** One stored delivery to send again: which relay, with which token, to where. */
interface Replay {
  readonly relay: URL;
  readonly token: string;
  readonly ref: string;
  readonly target: ForwardTarget;
  readonly json: boolean;
}

async function replay(io: CliIo, { relay, token, ref, target, json }: Replay): Promise<number> {
  let res: Response;
  try {
    res = await io.fetch(new URL(`/relay/deliveries/${encodeURIComponent(ref)}`, relay), {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(10_000),
    });
  } catch {
    throw new CliError(`cannot reach the relay at ${relay.origin}`);
  }
  const body = (await res.json().catch(() => ({}))) as { delivery?: StoredDelivery; code?: string };
  if (res.status === 401) throw new CliError('the relay refused the access token: it is wrong or was revoked');
  if (res.status === 404) throw new CliError(`the relay keeps no delivery ${printable(ref)} (an id or a sequence number, within the retention)`);
  if (!res.ok || body.delivery === undefined)
    throw new CliError(`the relay answered ${res.status}${body.code === undefined ? '' : ` ${printable(body.code)}`}`);
  const delivery = { ...body.delivery, mirror: false };
  const result = await forward(delivery, target);
  io.stdout.write(deliveryLine(delivery, result, json, new Date()));
  return result.status !== undefined && result.status >= 200 && result.status < 300 ? 0 : 1;
}

export const listenCommand: Command = {
  name: 'listen',
  summary: 'receive deliveries from a relay and hand them to a local receiver, re-signed',
  help,
  async run(args, io) {
    const { values, positionals } = parseOptions('listen', args, OPTIONS);
    if (positionals.length > 0) throw usageError('listen takes no arguments besides its options (see svc-webhooks listen --help)');
    const relay = httpUrl(values.relay, '--relay');
    const to = httpUrl(values.to, '--to');
    const allowRemote = values['allow-remote-target'] === true;
    const botTo = values['bot-to'] === undefined ? to : httpUrl(values['bot-to'], '--bot-to');
    const json = values.json === true;
    const target: ForwardTarget = {
      board: localUrl(to, '/webhooks/board', allowRemote, '--to'),
      bot: localUrl(botTo, '/webhooks/bot', allowRemote, values['bot-to'] === undefined ? '--to' : '--bot-to'),
      signing: signingOf(io, values.raw === true, values['secret-file']),
      timeoutMs: 10_000,
      fetch: io.fetch,
    };
    const token = requiredToken(io, values['token-file'], 'SVC_RELAY_TOKEN');
    if (values.replay !== undefined) return replay(io, { relay, token, ref: values.replay, target, json });
    if (io.interrupted === undefined) throw usageError('listen runs until interrupted, which needs a terminal or a process that can be');
    const filter: ListenFilter = {
      types: values.type === undefined ? undefined : new Set(values.type),
      boards: values.board === undefined ? undefined : new Set(values.board.map((b) => b.toLowerCase())),
    };
    const relayName = relay.href.replace(/\/$/, '');
    const cursor = new CursorFile(resolve(io.cwd, values['cursor-file'] ?? '.svc-webhooks-listen.json'), relayName);
    const tally = newTally();
    const say = (line: string): void => void io.stderr.write(`${new Date().toISOString()} ${printable(line)}\n`);
    const notices = new Notices(say, 60_000);
    const stop = new AbortController();
    void io.interrupted().then(() => stop.abort());
    try {
      await listen({
        relayUrl: relay.href,
        token,
        target,
        filter,
        cursor,
        fromStart: values['from-start'] === true,
        signal: stop.signal,
        retryMs: 2000,
        events: {
          connected: (hello) => {
            notices.recovered('relay', 'connected to the relay again');
            say(
              `listening as ${hello.name} from #${hello.cursor} (relay at #${hello.last})${hello.mirror === hello.name ? "; svc gets your receiver's answers" : ''}`,
            );
            if (hello.missed) say('some deliveries after your cursor are older than the relay keeps: they are gone');
          },
          delivered: (delivery, result) => {
            count(tally, result);
            io.stdout.write(deliveryLine(delivery, result, json, new Date()));
          },
          skipped: () => void tally.skipped++,
          notice: (key, text) => notices.notice(key, text),
          recovered: (key, text) => notices.recovered(key, text),
        },
      });
    } catch (err) {
      if (err instanceof RelayRefused) throw new CliError(err.message);
      throw err;
    }
    io.stdout.write(summaryLine(tally, json));
    return 0;
  },
};
