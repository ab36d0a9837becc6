import { retryDelays, DELIVERY_LIFETIME_MS } from '../../src/cli/retry-schedule';
import { boardEvent, exampleBoardTypes, signBoardEvent } from '../../src/testing';
import { config } from './config';
import { wallNow } from './effect-log';

/** One request the sender made and what came of it. */
export interface Answer {
  readonly id: string;
  readonly slot: number;
  /** The receiver process that answered (X-Fault-Pid); undefined when nothing answered. */
  readonly pid: number | undefined;
  /** The HTTP status; 0 when the request got no answer (refused, reset, timed out). */
  readonly status: number;
  /** A 2xx that said the delivery was a duplicate. */
  readonly duplicate: boolean;
  /** The error code of a refusal. */
  readonly code: string | undefined;
  readonly sentAt: number;
  readonly answeredAt: number;
}

export interface SenderResult {
  /** Every delivery id, in the order first sent. */
  readonly ids: readonly string[];
  /** Deliveries that never got a 2xx within their day. */
  readonly givenUp: readonly string[];
  /** Repeats of delivered deliveries that never got a 2xx (a duplicate must be answered 200 too). */
  readonly repeatsGivenUp: number;
  readonly answers: readonly Answer[];
  readonly repeats: number;
  readonly concurrent: number;
  readonly upperCase: number;
}

interface Delivery {
  readonly id: string;
  readonly event: object;
  delivered: boolean;
}

type Kind = 'first' | 'concurrent' | 'repeat';

const DELAYS = retryDelays();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * svc's board webhook sender on a compressed clock: each delivery sent (signed at sending time) to
 * one of the receivers, as a load balancer would pick; retried after 1, 2, 4 … minutes, at most an
 * hour apart, until a 2xx or the end of its day. Some deliveries go to two receivers at once, some
 * are delivered again after they succeeded, half of those with the id in upper case.
 */
export class Sender {
  private readonly startedAt = wallNow();
  private readonly answers: Answer[] = [];
  private readonly givenUp: string[] = [];
  private inFlight = 0;
  private readonly waiting: Array<() => void> = [];
  private repeats = 0;
  private concurrent = 0;
  private upperCase = 0;
  private repeatsGivenUp = 0;
  private stopped = false;
  /** Every sending under way; repeats add theirs while the run goes on. */
  private readonly chains: Array<Promise<void>> = [];

  /** `repeatShare`: the share of delivered deliveries sent again later (default config.repeatShare; 1 sends each twice). */
  constructor(
    private readonly urls: readonly string[],
    private readonly options: { readonly repeatShare?: number } = {},
  ) {}

  async run(): Promise<SenderResult> {
    const deliveries: Delivery[] = [];
    const types = exampleBoardTypes.filter((t) => t !== 'ping');
    for (let i = 0; i < config.deliveries && !this.stopped; i++) {
      const event = boardEvent(types[i % types.length]!);
      const delivery: Delivery = { id: event.id, event, delivered: false };
      deliveries.push(delivery);
      const slot = this.pickSlot();
      this.chains.push(this.chain(delivery, 'first', slot));
      if (Math.random() < config.concurrentShare) {
        this.concurrent++;
        this.chains.push(this.chain(delivery, 'concurrent', (slot + 1) % this.urls.length));
      }
      await sleep(config.emitMs / config.deliveries);
    }
    // Repeats start chains of their own while these run: wait until none is left.
    for (let settled = 0; settled < this.chains.length;) {
      const upTo = this.chains.length;
      await Promise.all(this.chains.slice(settled, upTo));
      settled = upTo;
    }
    return {
      ids: deliveries.map((d) => d.id),
      givenUp: this.givenUp,
      repeatsGivenUp: this.repeatsGivenUp,
      answers: this.answers,
      repeats: this.repeats,
      concurrent: this.concurrent,
      upperCase: this.upperCase,
    };
  }

  /** Stops sending new deliveries and retries (the run went over its time budget). */
  stop(): void {
    this.stopped = true;
  }

  private svcNow(): number {
    return (wallNow() - this.startedAt) * config.clockScale;
  }

  private pickSlot(): number {
    return Math.floor(Math.random() * this.urls.length);
  }

  /** One sending of a delivery and its retries, until a 2xx or the end of its day. */
  private async chain(delivery: Delivery, kind: Kind, firstSlot: number, upper = false): Promise<void> {
    const bornAt = this.svcNow();
    let slot = firstSlot;
    for (let failures = 0; !this.stopped; failures++) {
      const answer = await this.send(delivery, slot, upper);
      if (answer.status >= 200 && answer.status < 300) {
        if (!delivery.delivered) {
          delivery.delivered = true;
          if (Math.random() < (this.options.repeatShare ?? config.repeatShare)) this.repeatLater(delivery);
        }
        return;
      }
      // A concurrent copy is svc sending twice; only the first sending is retried.
      if (kind === 'concurrent' || (kind === 'first' && delivery.delivered)) return;
      const delay = DELAYS[failures];
      if (delay === undefined || this.svcNow() + delay - bornAt > DELIVERY_LIFETIME_MS) {
        if (kind === 'repeat') this.repeatsGivenUp++;
        else if (!delivery.delivered) this.givenUp.push(delivery.id);
        return;
      }
      await sleep(delay / config.clockScale);
      slot = this.pickSlot();
    }
  }

  private repeatLater(delivery: Delivery): void {
    this.repeats++;
    const upper = Math.random() < config.upperCaseShare;
    if (upper) this.upperCase++;
    const waitMs = (Math.random() * config.repeatWithinSvcMs) / config.clockScale;
    this.chains.push(sleep(waitMs).then(() => this.chain(delivery, 'repeat', this.pickSlot(), upper)));
  }

  private async send(delivery: Delivery, slot: number, upper: boolean): Promise<Answer> {
    await this.acquire();
    const signed = signBoardEvent(delivery.event, { secret: config.secret, deliveryId: upper ? delivery.id.toUpperCase() : delivery.id });
    const sentAt = wallNow();
    let status = 0;
    let pid: number | undefined;
    let duplicate = false;
    let code: string | undefined;
    try {
      const res = await fetch(this.urls[slot]!, {
        method: 'POST',
        headers: signed.headers,
        body: signed.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(config.requestTimeoutMs),
      });
      const text = await res.text();
      status = res.status;
      pid = Number(res.headers.get('x-fault-pid')) || undefined;
      const body = jsonOf(text);
      duplicate = status === 200 && body.duplicate === true;
      code = typeof body.code === 'string' ? body.code : status >= 300 ? '(no code)' : undefined;
    } catch {
      status = 0;
    } finally {
      this.release();
    }
    const answer: Answer = { id: delivery.id, slot, pid, status, duplicate, code, sentAt, answeredAt: wallNow() };
    this.answers.push(answer);
    return answer;
  }

  private async acquire(): Promise<void> {
    if (this.inFlight < config.maxInFlight) {
      this.inFlight++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.inFlight--;
  }
}

/** The answer's JSON fields; none when it is not a JSON object (not the library's answer). */
function jsonOf(text: string): { duplicate?: unknown; code?: unknown } {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? value : {};
  } catch {
    return {};
  }
}
