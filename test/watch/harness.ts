/** A watcher against the emulated svc over loopback HTTP, with its changes and log lines kept. */
import { SvcClient } from '../../src/client';
import { watchWebhooks, type WatchOptions, type WebhookChange, type WebhookWatcher } from '../../src/watch';
import type { FakeSvcOptions } from '../../src/testing';
import { memoryLogger } from '../support/apps';
import { EmulatedWebhooks } from './emulated-webhooks';

export const LEVEL = { info: 30, warn: 40, error: 50 } as const;

export interface Harness {
  readonly svc: EmulatedWebhooks;
  readonly client: SvcClient;
  readonly botClient: SvcClient;
  readonly changes: WebhookChange[];
  readonly lines: () => Array<Record<string, any>>;
  readonly logText: () => string;
  watcher: WebhookWatcher | undefined;
  /** Starts a watcher with the harness's client, logger and onChange; `options` over them. */
  watch(options?: Partial<WatchOptions>): WebhookWatcher;
  /** The changes of one board (or 'bot'), as `previous→current` state names. */
  path(which: string): string[];
  close(): Promise<void>;
}

/** `boards` boards with webhooks; deliveries go to `forwardTo` (a receiver's base URL) or to a sink. */
export async function harness(setup: { boards?: number; forwardTo?: string; options?: FakeSvcOptions } = {}, clientTimeoutMs = 1_000): Promise<Harness> {
  const svc = await EmulatedWebhooks.start({
    boards: setup.boards ?? 1,
    ...(setup.forwardTo === undefined ? {} : { forwardTo: setup.forwardTo }),
    ...(setup.options === undefined ? {} : { options: setup.options }),
  });
  const client = new SvcClient({ baseUrl: svc.baseUrl, token: svc.personToken, timeoutMs: clientTimeoutMs });
  const botClient = new SvcClient({ baseUrl: svc.baseUrl, token: svc.botToken, timeoutMs: clientTimeoutMs });
  const log = memoryLogger();
  const changes: WebhookChange[] = [];
  const h: Harness = {
    svc,
    client,
    botClient,
    changes,
    lines: () => log.lines,
    logText: log.text,
    watcher: undefined,
    watch(options = {}) {
      h.watcher = watchWebhooks({
        client,
        boards: svc.boardIds,
        intervalMs: 40,
        logger: log.logger,
        ...options,
        onChange: (change) => {
          changes.push(change);
          options.onChange?.(change);
        },
      });
      return h.watcher;
    },
    path(which) {
      return changes
        .filter((c) => (which === 'bot' ? c.current.webhook === 'bot' : c.current.webhook === 'board' && c.current.boardId === which))
        .map((c) => `${c.previous?.state ?? 'none'}→${c.current.state}`);
    },
    async close() {
      await h.watcher?.close();
      await svc.close();
    },
  };
  return h;
}

/** Waits until `check` holds, polling every 10 ms; fails with `what` after `ms`. */
export async function until(check: () => boolean | Promise<boolean>, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
