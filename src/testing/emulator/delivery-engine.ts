import { signBoardEvent, signBotUpdate } from '../sign-delivery';
import type { DeliveryAudit } from './audit';
import type { Chaos } from './chaos';
import type { EmulatorClock } from './clock';
import { deliveryTarget, type TargetRules } from './delivery-target';
import type { Random } from './random';
import { DAY_MS, retryDelayMs } from './retry-schedule';
import { sendRequest, type SendResult } from './send-request';
import { endQueue, type QueuedDelivery, type WebhookRecord } from './webhook-record';

/** What the engine is built from, once per emulator. */
export interface EngineParts {
  readonly clock: EmulatorClock;
  readonly chaos: Chaos;
  readonly random: Random;
  readonly audit: DeliveryAudit;
  readonly targets: TargetRules;
}

/** One send of one copy: what it carries and how it is labelled in the audit. */
interface Copy {
  readonly hook: WebhookRecord;
  readonly delivery: Pick<QueuedDelivery, 'id' | 'kind' | 'ownerId' | 'eventType' | 'sequence' | 'body'>;
  readonly attempt: number;
  readonly copy: 'original' | 'duplicate' | 'concurrent' | 'ping';
}

interface Ready {
  readonly delivery: QueuedDelivery;
  readonly done: () => void;
}

/**
 * svc's delivery of webhooks: queue, sign, POST, retry at 1, 2, 4 … minutes (at most an hour
 * apart) for a day, and disable a webhook that failed for a whole day. Each webhook sends one
 * delivery at a time, in the order chaos leaves them; webhooks do not wait for each other.
 */
export class DeliveryEngine {
  readonly #parts: EngineParts;
  readonly #ready = new Map<WebhookRecord, Ready[]>();
  readonly #pumps = new Map<WebhookRecord, Promise<void>>();
  /** Attempts scheduled for a time already reached, whose timer has not fired yet. */
  #imminent = 0;

  constructor(parts: EngineParts) {
    this.#parts = parts;
  }

  /** Queues `delivery` on `hook` and sends it now; false when svc would not queue it (disabled or paused). */
  enqueue(hook: WebhookRecord, delivery: QueuedDelivery): boolean {
    if (!hook.enabled || hook.pausedReason !== null) return false;
    hook.queue.add(delivery);
    this.#parts.audit.track(delivery);
    this.#schedule(hook, delivery, this.#parts.clock.now());
    return true;
  }

  /** Sends what came due while `hook` was paused. */
  resume(hook: WebhookRecord): void {
    for (const delivery of hook.held.splice(0)) this.#schedule(hook, delivery, this.#parts.clock.now());
  }

  /** Sends a ping to `hook` at once, outside the queue, and answers as the ping route does. */
  async ping(hook: WebhookRecord, delivery: Copy['delivery']): Promise<{ ok: boolean; status: number; error: string }> {
    const result = await this.#send({ hook, delivery, attempt: 1, copy: 'ping' });
    return { ok: result.ok, status: result.status ?? 0, error: result.error ?? '' };
  }

  /** Resolves once no webhook has a delivery ready or in flight (retries scheduled later do not count; on the manual clock, nor do attempts until `advance()` reaches them). */
  async idle(): Promise<void> {
    for (;;) {
      if (this.#pumps.size > 0) await Promise.all(this.#pumps.values());
      else if (this.#imminent > 0 && !this.#parts.clock.manual) await new Promise((resolve) => setTimeout(resolve, 5));
      else return;
    }
  }

  #schedule(hook: WebhookRecord, delivery: QueuedDelivery, at: number): void {
    const imminent = at <= this.#parts.clock.now();
    if (imminent) this.#imminent += 1;
    let fired = false;
    const settle = (): void => {
      if (imminent && !fired) this.#imminent -= 1;
      fired = true;
    };
    const cancel = this.#parts.clock.at(at, () => {
      settle();
      delivery.cancel = undefined;
      return new Promise<void>((done) => {
        const ready = this.#ready.get(hook) ?? [];
        this.#ready.set(hook, ready);
        ready.push({ delivery, done });
        // Started on the next microtask, so deliveries due at the same instant are shuffled together.
        if (!this.#pumps.has(hook))
          this.#pumps.set(
            hook,
            Promise.resolve().then(() => this.#pump(hook)),
          );
      });
    });
    delivery.cancel = () => {
      settle();
      cancel();
    };
  }

  async #pump(hook: WebhookRecord): Promise<void> {
    const ready = this.#ready.get(hook)!;
    while (ready.length > 0) {
      const batch = this.#parts.random.shuffleWithin(ready.splice(0), this.#parts.chaos.reorderWindow);
      for (const item of batch) {
        await this.#attempt(hook, item.delivery).catch(() => undefined);
        item.done();
      }
    }
    this.#ready.delete(hook);
    this.#pumps.delete(hook);
  }

  async #attempt(hook: WebhookRecord, delivery: QueuedDelivery): Promise<void> {
    if (delivery.status !== 'pending' || !hook.queue.has(delivery)) return;
    if (hook.pausedReason !== null) {
      hook.held.push(delivery);
      return;
    }
    delivery.attempts += 1;
    const copy: Copy = { hook, delivery, attempt: delivery.attempts, copy: 'original' };
    const concurrent = this.#parts.random.chance(this.#parts.chaos.concurrentCopyRate);
    const results = await Promise.all([this.#send(copy), ...(concurrent ? [this.#send({ ...copy, copy: 'concurrent' })] : [])]);
    if (delivery.status !== 'pending') return;
    // Two copies at once race for the receiver's claim; the attempt succeeded when either got a 2xx.
    const result = results.find((r) => r.ok) ?? results[0]!;
    if (result.ok) {
      this.#succeeded(hook, delivery);
      if (this.#parts.random.chance(this.#parts.chaos.duplicateRate)) await this.#send({ ...copy, copy: 'duplicate' });
    } else {
      this.#failed(hook, delivery, result.error ?? 'failed');
    }
  }

  #succeeded(hook: WebhookRecord, delivery: QueuedDelivery): void {
    delivery.status = 'delivered';
    hook.queue.delete(delivery);
    hook.lastOkAt = this.#parts.clock.now();
    hook.failingSince = null;
    hook.cancelDisable?.();
    hook.cancelDisable = undefined;
  }

  #failed(hook: WebhookRecord, delivery: QueuedDelivery, error: string): void {
    const now = this.#parts.clock.now();
    hook.lastError = error;
    if (hook.failingSince === null) {
      hook.failingSince = now;
      hook.cancelDisable = this.#parts.clock.at(now + DAY_MS, () => this.#disable(hook, now));
    }
    const next = now + retryDelayMs(delivery.attempts);
    if (next - delivery.createdAt >= DAY_MS) {
      delivery.status = 'expired';
      hook.queue.delete(delivery);
      return;
    }
    this.#schedule(hook, delivery, next);
  }

  /** A day after `since`, if the webhook has failed all along: disabled, and its queue dropped. */
  #disable(hook: WebhookRecord, since: number): void {
    if (!hook.enabled || hook.failingSince !== since) return;
    hook.cancelDisable = undefined;
    hook.enabled = false;
    hook.disabledAt = this.#parts.clock.now();
    endQueue(hook, 'dropped');
  }

  async #send(copy: Copy): Promise<SendResult> {
    const { hook, delivery } = copy;
    const { chaos, random, clock } = this.#parts;
    const at = clock.now();
    const where = deliveryTarget(hook.url, this.#parts.targets);
    let result: SendResult;
    if ('refused' in where) {
      result = { ok: false, status: null, error: where.refused };
    } else {
      // The timestamp is the real time of sending: the receiver checks it against its own clock.
      const timestamp = Math.floor(Date.now() / 1000);
      const signed =
        delivery.kind === 'board' ? signBoardEvent(delivery.body, { secret: hook.secret, timestamp }) : signBotUpdate(delivery.body, { secret: hook.secret });
      const drop = copy.copy !== 'ping' && random.chance(chaos.dropRate);
      const slow = !drop && random.chance(chaos.slowRate);
      result = await sendRequest({ target: where.target, body: signed.body, headers: signed.headers, drop, ...(slow ? { pauseMs: chaos.slowMs } : {}) });
    }
    this.#parts.audit.record({
      deliveryId: delivery.id,
      kind: delivery.kind,
      ownerId: delivery.ownerId,
      eventType: delivery.eventType,
      sequence: delivery.sequence,
      attempt: copy.attempt,
      copy: copy.copy,
      at,
      ...result,
    });
    return result;
  }
}
