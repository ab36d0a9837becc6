import type { IncomingMessage, ServerResponse } from 'node:http';
import pino from 'pino';
import { svcBoardWebhook, type BoardWebhookOptions, type DeliveryContext, type DeliveryStore } from '../../src';
import { config } from './config';
import type { EffectWriter } from './effect-log';
import type { StoreKind } from './store-kind';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const between = ([low, high]: readonly [number, number]) => low + Math.random() * (high - low);

/** How a fault-test handler runs beyond the common shape. */
export interface RecordedHandlerOptions {
  /** A share of runs (config.slowShare) takes config.slowMs, past the lease: a retry may overlap it. */
  readonly slowRuns?: boolean;
  /** Writes the side effect in the store's own transaction (StoreKind.effect); calls `record` then. */
  readonly effect?: StoreKind['effect'];
}

/**
 * The handler of every fault-test receiver and worker: it records each run in the process's effect
 * file (S started, F failed, E the side effect, X failed after it, R returned; see effect-log.ts),
 * fails a share of runs (config.failShare) and lingers after the effect, so that a kill can land
 * between the side effect and the store's commit.
 */
export function recordedHandler(effects: EffectWriter, options: RecordedHandlerOptions = {}) {
  return async (_event: unknown, ctx: DeliveryContext): Promise<void> => {
    const id = ctx.deliveryId;
    effects.write('S', id);
    await sleep(options.slowRuns === true && Math.random() < config.slowShare ? between(config.slowMs) : between([2, 20]));
    if (Math.random() < config.failShare) {
      effects.write('F', id);
      throw new Error('injected handler failure');
    }
    const linger = () => sleep(between(config.afterEffectMs));
    let written = false;
    const record = () => {
      written = true;
      effects.write('E', id); // the side effect
    };
    if (options.effect === undefined) record();
    else {
      try {
        await options.effect(ctx, record, linger);
      } catch (err) {
        effects.write(written ? 'X' : 'F', id);
        throw err;
      }
    }
    await linger();
    effects.write('R', id);
  };
}

/**
 * The board webhook of a fault-test process: the test's secret, deadlines and lease, warnings logged
 * with the pid, and the recorded handler for every event. `inbox` for the cluster run's processes.
 */
export function faultWebhook(store: DeliveryStore, effects: EffectWriter, options: RecordedHandlerOptions & { inbox?: BoardWebhookOptions['inbox'] } = {}) {
  const { inbox, ...handler } = options;
  return svcBoardWebhook({
    secret: config.secret,
    store,
    timeoutMs: config.handlerTimeoutMs,
    leaseMs: config.leaseMs,
    logger: pino({ level: 'warn', base: { pid: process.pid } }),
    ...(inbox === undefined ? {} : { inbox }),
  }).onAny(recordedHandler(effects, handler));
}

/** A listener whose every answer carries the process's pid in X-Fault-Pid, for the test to tell receivers apart. */
export function withPid(listener: (req: IncomingMessage, res: ServerResponse) => void) {
  return (req: IncomingMessage, res: ServerResponse) => {
    res.setHeader('X-Fault-Pid', String(process.pid));
    listener(req, res);
  };
}
