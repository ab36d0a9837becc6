import { webhookSecretProblem } from '../client/webhook-secret';
import type { WebhookLogger } from '../internal/logging/logger';
import { describe, probe } from './probe';
import { displayUrl } from './classify-state';
import { isElsewhere } from './expect-url';
import { duration, when } from './describe-status';
import type { WatchMetrics } from './watch-metrics';
import type { WatchSettings } from './watch-options';
import type { WatchedWebhook, WebhookStatus } from './watch-types';
import { within } from './within';

/** The spec: at most one ping per board per 10 seconds. */
export const PING_SPACING_MS = 10_000;
/** The longest wait between two attempts at a webhook whose receiver does not answer. */
export const MAX_BACKOFF_MS = 60 * 60 * 1000;
const SECRET_TIMEOUT_MS = 5_000;

const clock = (): number => performance.now();

interface Attempts {
  /** Failed attempts in a row; the wait before the next one doubles with each. */
  failures: number;
  /** No attempt before this (monotonic ms). */
  notBefore: number;
  lastPing: number;
  /** Set by a re-enable: `lastOkAt` as svc gave it right after, to tell whether a delivery succeeded since. */
  baseline: string | undefined;
  /** Disabled again with no delivery succeeded since our re-enable: not tried again until seen enabled. */
  givenUp: boolean;
  busy: boolean;
}

/** A disabled webhook to re-enable: which one, its status, and the URL svc holds. */
export interface ReenableInput {
  readonly key: string;
  readonly target: WatchedWebhook;
  readonly status: WebhookStatus;
  readonly rawUrl: string | undefined;
  /** The URL the webhook should deliver to (`expectUrl`); undefined: unknown, so never re-enabled. */
  readonly expectedUrl: string | undefined;
}

/**
 * Re-enables webhooks svc disabled, with `reenable: true`. For each: the receiver must first answer
 * a probe (a board: svc's ping, at most once per 10 s, 429 honoured), and svc must hold the expected
 * URL (`expectUrl`: the PUT carries the secret there); then one PUT with the same URL
 * and the secret the receiver verifies with (the fixed secret, or the resolver's answer for the
 * board): never without one, as a board PUT without a secret makes svc generate a new one. A failed
 * probe or PUT waits `reenableBackoffMs`, doubling up to an hour. Never in a loop: a webhook svc
 * disables again before any delivery succeeded since the re-enable is left disabled (an error line
 * says so) until it is seen enabled again.
 */
export class Reenabler {
  private readonly attempts = new Map<string, Attempts>();

  constructor(
    private readonly settings: WatchSettings,
    private readonly logger: WebhookLogger,
    private readonly metrics: WatchMetrics,
  ) {}

  /** Tells of a status that is not disabled: a delivery since the re-enable, or a hand's re-enable, resets the record. */
  seen(key: string, status: WebhookStatus): void {
    const record = this.attempts.get(key);
    if (record === undefined || status.state === 'disabled' || status.state === 'unreachable' || status.state === 'missing') return;
    if (record.givenUp || record.baseline === undefined || (status.lastOkAt !== undefined && status.lastOkAt.raw !== record.baseline))
      this.attempts.delete(key);
  }

  forget(key: string): void {
    this.attempts.delete(key);
  }

  /** Tries to re-enable a disabled webhook when it is due; resolves true when svc took the PUT. */
  async attempt(input: ReenableInput): Promise<boolean> {
    const record = this.record(input.key);
    if (record.busy || record.givenUp || clock() < record.notBefore) return false;
    if (record.baseline !== undefined) {
      if ((input.status.lastOkAt?.raw ?? '') === record.baseline) return this.giveUp(input, record);
      record.baseline = undefined;
      record.failures = 0;
    }
    record.busy = true;
    try {
      return await this.run(input, record);
    } finally {
      record.busy = false;
    }
  }

  private async run(input: ReenableInput, record: Attempts): Promise<boolean> {
    const { target, rawUrl } = input;
    const who = whoOf(target);
    if (rawUrl === undefined)
      return this.failed(input, record, { outcome: 'failed', message: `${who}: not re-enabled: svc's state holds no URL to PUT again` });
    // The PUT sends the receiver's secret to the URL svc holds: only when that is the expected one.
    if (input.expectedUrl === undefined || isElsewhere(rawUrl, input.expectedUrl))
      return this.failed(input, record, {
        outcome: 'url_unchecked',
        message: `${who}: not re-enabled: svc holds ${displayUrl(rawUrl)}, ${input.expectedUrl === undefined ? 'and expectUrl gave no URL for it' : `not the expected ${displayUrl(input.expectedUrl)}`}; the re-enabling PUT would send the receiver's secret there`,
      });
    const secret = await this.secretOf(target);
    if (typeof secret !== 'string')
      return this.failed(input, record, {
        outcome: 'no_secret',
        message: `${who}: not re-enabled: ${secret.problem} (a PUT without the receiver's secret would make svc generate one the receiver does not know)`,
      });
    // svc's ping: at most one per board per 10 s, whatever else asks this watcher to probe.
    const pings = target.webhook === 'board' && this.settings.probe === undefined;
    if (pings && clock() < record.lastPing + PING_SPACING_MS) {
      record.notBefore = record.lastPing + PING_SPACING_MS;
      return false;
    }
    const lastPing = record.lastPing;
    if (pings) record.lastPing = clock();
    const probeTarget =
      target.webhook === 'board' ? { webhook: 'board' as const, boardId: target.boardId, url: rawUrl } : { webhook: 'bot' as const, url: rawUrl };
    const client = target.webhook === 'board' ? this.settings.client : this.settings.bot!.client;
    const found = await probe({ target: probeTarget, client, custom: this.settings.probe, fetch: this.settings.fetch });
    if (found.kind === 'wait') {
      // svc sent no ping: its Retry-After, not our spacing, says when the next may go.
      record.lastPing = lastPing;
      record.notBefore = clock() + found.ms;
      this.logger.info(
        { webhook: target.webhook, ...boardField(target), retryInMs: found.ms },
        `${who}: svc rate-limited the probe (429); probing again in ${duration(found.ms)}`,
      );
      return false;
    }
    if (found.kind === 'failed')
      return this.failed(input, record, {
        outcome: 'probe_failed',
        message: `${who}: not re-enabled yet: the receiver did not answer the probe (${found.detail})`,
      });
    try {
      if (target.webhook === 'board') {
        const result = await this.settings.client.setBoardWebhook(target.boardId, { url: rawUrl, secret });
        if (result.generatedSecret !== undefined)
          this.logger.error(
            { webhook: 'board', boardId: target.boardId },
            `${who}: svc answered the re-enabling PUT with a generated secret, though one was sent: the receiver will refuse its deliveries; set the secret again`,
          );
      } else {
        await this.settings.bot!.client.setBotWebhook({ url: rawUrl, secret });
      }
    } catch (err) {
      return this.failed(input, record, { outcome: 'failed', message: `${who}: the re-enabling PUT failed (${describe(err)})` });
    }
    return true;
  }

  /** After svc took the PUT: the state it then reports, to tell a later disable from this one. */
  reenabled(input: ReenableInput, after: WebhookStatus): void {
    const record = this.record(input.key);
    record.baseline = after.lastOkAt?.raw ?? '';
    record.failures = 0;
    this.metrics.reenable(input.target.webhook, 'reenabled');
    const at = input.status.disabledAt === undefined ? '' : ` at ${when(input.status.disabledAt)}`;
    this.logger.warn(
      { webhook: input.target.webhook, ...boardField(input.target), state: after.state, disabledAt: input.status.disabledAt?.raw },
      `${whoOf(input.target)}: re-enabled: its receiver answered the probe, and svc took a PUT of the same URL with the receiver's secret (kept, not regenerated); the queue svc dropped when it disabled it${at} is not delivered`,
    );
  }

  private giveUp(input: ReenableInput, record: Attempts): boolean {
    record.givenUp = true;
    this.metrics.reenable(input.target.webhook, 'given_up');
    const tool =
      input.target.webhook === 'board' ? `svc-webhooks board-webhook reenable ${input.target.boardId} --url <its URL>` : 'svc-webhooks bot-webhook set';
    this.logger.error(
      { webhook: input.target.webhook, ...boardField(input.target) },
      `${whoOf(input.target)}: svc disabled it again, and no delivery succeeded since the watcher re-enabled it: not re-enabling it again; fix the receiver, then re-enable it by hand (${tool})`,
    );
    return false;
  }

  private failed(input: ReenableInput, record: Attempts, what: { outcome: 'failed' | 'no_secret' | 'probe_failed' | 'url_unchecked'; message: string }): false {
    record.failures++;
    const wait = Math.min(this.settings.reenableBackoffMs * 2 ** (record.failures - 1), MAX_BACKOFF_MS);
    record.notBefore = clock() + wait;
    this.metrics.reenable(input.target.webhook, what.outcome);
    const level = what.outcome === 'probe_failed' ? 'warn' : 'error';
    this.logger[level](
      { webhook: input.target.webhook, ...boardField(input.target), outcome: what.outcome, retryInMs: wait },
      `${what.message}; trying again in ${duration(wait)}`,
    );
    return false;
  }

  /** The secret to PUT: the bot's, or the board's from the fixed secret (the first of several) or the resolver. */
  private async secretOf(target: WatchedWebhook): Promise<string | { problem: string }> {
    let answer: unknown;
    try {
      if (target.webhook === 'bot') answer = this.settings.bot?.secret;
      else {
        const source = this.settings.secret;
        answer = typeof source === 'function' ? await within(SECRET_TIMEOUT_MS, 'the secret resolver', () => source({ boardId: target.boardId })) : source;
      }
    } catch (err) {
      return { problem: `the secret resolver failed (${describe(err)})` };
    }
    const secret = Array.isArray(answer) ? (answer as unknown[])[0] : answer;
    if (secret === undefined || secret === null) return { problem: 'no secret is known for it' };
    if (typeof secret !== 'string') return { problem: 'the secret resolver answered something that is not a secret' };
    const problem = webhookSecretProblem(secret);
    return problem === undefined ? secret : { problem: `its secret is not one svc takes (${problem})` };
  }

  private record(key: string): Attempts {
    let record = this.attempts.get(key);
    if (record === undefined) {
      record = { failures: 0, notBefore: 0, lastPing: Number.NEGATIVE_INFINITY, baseline: undefined, givenUp: false, busy: false };
      this.attempts.set(key, record);
    }
    return record;
  }
}

function whoOf(target: WatchedWebhook): string {
  return target.webhook === 'board' ? `board webhook of board ${target.boardId}` : 'bot webhook';
}

function boardField(target: WatchedWebhook): { boardId?: string } {
  return target.webhook === 'board' ? { boardId: target.boardId } : {};
}
