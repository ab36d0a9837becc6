import type { WebhookLogger } from '../internal/logging/logger';
import { safeError } from '../internal/logging/safe-error';

/** What the watchdog watches, and what it does about a worker that stopped taking jobs. */
export interface WatchdogParts {
  /** How often it looks, in ms (the worker's stalled-job interval). */
  readonly everyMs: number;
  /** Whether handlers of this worker run now: a busy worker is taking jobs. */
  readonly busy: () => boolean;
  /** When this worker last took a job, in ms since the epoch. */
  readonly lastTaken: () => number;
  /** How many jobs wait in the queue for a worker. */
  readonly waiting: () => Promise<number>;
  /** Replaces the worker's BullMQ worker (and so its blocking connection). */
  readonly restart: () => Promise<void>;
  readonly logger: WebhookLogger;
}

/** Looks that must all find jobs waiting and the worker idle before it is restarted. */
export const IDLE_LOOKS = 2;

/**
 * BullMQ's worker can stop taking jobs for good after a Redis failover: its blocking connection
 * (on a Redis Cluster, a duplicate of the cluster client) stays wedged while the queue fills, and
 * every delivery it holds would be lost when svc's day runs out. A worker with no handler running,
 * that took no job for IDLE_LOOKS looks in a row while jobs wait, is given a new BullMQ worker. An
 * idle worker whose queue is empty, or a busy one, is never touched, so no running handler is cut.
 */
export function watchWorker(parts: WatchdogParts): { stop(): void } {
  let idleLooks = 0;
  let looking = false;
  const look = async () => {
    if (looking) return;
    looking = true;
    try {
      if (parts.busy() || Date.now() - parts.lastTaken() <= parts.everyMs) {
        idleLooks = 0;
        return;
      }
      // Stryker disable next-line ArrowFunction: undefined is no more than 0 jobs waiting (test/mutation/EQUIVALENT.receive.md)
      const waiting = await parts.waiting().catch(() => 0);
      idleLooks = waiting > 0 ? idleLooks + 1 : 0;
      if (idleLooks < IDLE_LOOKS) return;
      idleLooks = 0;
      parts.logger.warn(
        { waiting, idleMs: Math.round(Date.now() - parts.lastTaken()) },
        'inbox worker: took no job while deliveries wait in the queue; restarting its connection to the queue',
      );
      await parts.restart();
    } catch (err) {
      parts.logger.error({ err: safeError(err) }, 'inbox worker: could not restart the worker; trying again at the next look');
    } finally {
      looking = false;
    }
  };
  const timer = setInterval(() => void look(), parts.everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
