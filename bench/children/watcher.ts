/**
 * The webhook watcher alone in a process (run with --expose-gc): it polls every board of the
 * parent's fake svc at a compressed interval, and reports its own CPU time per poll, its heap per
 * board and its RSS. Nothing else runs here, so the process's figures are the watcher's.
 */
import { SvcClient } from '../../src/client/svc-client';
import { watchWebhooks } from '../../src/watch/watch-webhooks';
import type { WebhookHealth } from '../../src/watch/watch-types';
import { serveRequests, type Message } from '../ipc';

export interface WatcherChildReport {
  readonly polls: number;
  readonly seconds: number;
  /** User + system CPU of this process over the measured window, in µs. */
  readonly cpuUs: number;
  /** Heap (and array buffers) after a GC, before the watcher and once it knows every board. */
  readonly heapBefore: number;
  readonly heapAfter: number;
  readonly rssBytes: number;
  readonly changes: number;
  readonly states: Partial<Record<WebhookHealth, number>>;
  /** The first round, from start to every board checked, in s. */
  readonly firstRoundSeconds: number;
}

function heapNow(): number {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

async function measure(message: Message): Promise<WatcherChildReport> {
  const boards = message.boards as string[];
  const intervalMs = message.intervalMs as number;
  const measureMs = message.measureMs as number;
  const heapBefore = heapNow();
  const svc = new SvcClient({ baseUrl: message.baseUrl as string, token: message.token as string, timeoutMs: 10_000 });
  let polls = 0;
  // The same client, counting the polls.
  const client = {
    getBoardWebhook: (id: string) => (polls++, svc.getBoardWebhook(id)),
    getBotWebhook: () => svc.getBotWebhook(),
    setBoardWebhook: svc.setBoardWebhook.bind(svc),
    pingBoardWebhook: svc.pingBoardWebhook.bind(svc),
    setBotWebhook: svc.setBotWebhook.bind(svc),
  };
  let changes = 0;
  const started = performance.now();
  const watcher = watchWebhooks({
    client,
    boards,
    intervalMs,
    maxRequestsPerSecond: message.maxRequestsPerSecond as number,
    logger: false,
    onChange: () => void changes++,
  });
  await watcher.checked();
  const firstRoundSeconds = (performance.now() - started) / 1000;
  const heapAfter = heapNow();
  const fromPolls = polls;
  const fromChanges = changes;
  const cpu = process.cpuUsage();
  const from = performance.now();
  await new Promise((resolve) => setTimeout(resolve, measureMs));
  const used = process.cpuUsage(cpu);
  const seconds = (performance.now() - from) / 1000;
  const measured = polls - fromPolls;
  const states: Partial<Record<WebhookHealth, number>> = {};
  for (const status of watcher.statuses()) states[status.state] = (states[status.state] ?? 0) + 1;
  const rssBytes = process.memoryUsage().rss;
  await watcher.close();
  return {
    polls: measured,
    seconds,
    cpuUs: used.user + used.system,
    heapBefore,
    heapAfter,
    rssBytes,
    changes: changes - fromChanges,
    states,
    firstRoundSeconds,
  };
}

serveRequests({ measure });
