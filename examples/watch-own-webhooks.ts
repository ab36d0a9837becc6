/**
 * The example server watches its own webhooks when given a token (docs/never-silently-disabled.md):
 *
 * - SVC_BASE_URL: svc's base address;
 * - SVC_TOKEN and SVC_WATCH_BOARDS (board ids, comma-separated): the board webhooks, read with the
 *   token of a person who manages the boards;
 * - SVC_BOT_TOKEN: the bot webhook;
 * - SVC_WATCH_BOARD_URL, SVC_WATCH_BOT_URL: the URLs svc should deliver to (another is reported
 *   misdirected);
 * - SVC_WATCH_REENABLE=on: re-enable a webhook svc disabled, with the server's own secrets (never on
 *   the published development secrets), only at those URLs (so it needs them);
 * - SVC_WATCH_INTERVAL_MS: how often each webhook is asked (default 5 minutes).
 *
 * Without SVC_BASE_URL and a token nothing is watched, and the inspector's panel says how to start.
 */
import type { Logger } from 'pino';
import { SvcClient } from '../src/client';
import { watchWebhooks, type WatchOptions, type WebhookWatcher } from '../src/watch';

export interface OwnSecrets {
  readonly board: string;
  readonly bot: string;
  /** The published development secrets: never PUT to svc. */
  readonly development: boolean;
}

export type Watching = { readonly watcher: WebhookWatcher } | { readonly off: string };

export function watchOwnWebhooks(env: NodeJS.ProcessEnv, secrets: OwnSecrets, logger: Logger): Watching {
  const baseUrl = env.SVC_BASE_URL;
  const boards = (env.SVC_WATCH_BOARDS ?? '')
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '');
  const boardToken = env.SVC_TOKEN || undefined;
  const botToken = env.SVC_BOT_TOKEN || undefined;
  const howTo =
    'Not watching: set SVC_BASE_URL, and SVC_TOKEN with SVC_WATCH_BOARDS (board ids) and/or SVC_BOT_TOKEN, to see what svc reports for each webhook.';
  if (!baseUrl || (boardToken === undefined && botToken === undefined)) return { off: howTo };
  if (boardToken !== undefined && boards.length === 0) return { off: `${howTo} SVC_TOKEN is set, but SVC_WATCH_BOARDS names no board.` };
  const reenable = env.SVC_WATCH_REENABLE === 'on';
  if (reenable && secrets.development) logger.warn('SVC_WATCH_REENABLE=on is ignored on the published development secrets: a re-enable would PUT them to svc');
  const withReenable = reenable && !secrets.development;
  try {
    const options: WatchOptions = {
      client: new SvcClient({ baseUrl, ...(boardToken === undefined ? { token: botToken } : { token: boardToken }) }),
      ...(boardToken === undefined ? {} : { boards, secret: secrets.board }),
      ...(env.SVC_WATCH_BOARD_URL ? { expectUrl: env.SVC_WATCH_BOARD_URL } : {}),
      ...(botToken === undefined
        ? {}
        : {
            bot: {
              client: new SvcClient({ baseUrl, token: botToken }),
              secret: secrets.bot,
              ...(env.SVC_WATCH_BOT_URL ? { expectUrl: env.SVC_WATCH_BOT_URL } : {}),
            },
          }),
      reenable: withReenable,
      logger,
      ...(env.SVC_WATCH_INTERVAL_MS ? { intervalMs: Number(env.SVC_WATCH_INTERVAL_MS) } : {}),
    };
    return { watcher: watchWebhooks(options) };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    logger.error({ reason }, 'not watching the webhooks: the watcher could not be set up');
    return { off: `Not watching: ${reason}` };
  }
}
