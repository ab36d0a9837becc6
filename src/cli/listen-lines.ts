import type { ForwardResult } from '../relay/forward';
import type { StreamedDelivery } from '../relay/sse-frames';
import { printable, terminalJson } from './format';

/**
 * What `listen` prints: one line per delivery (time, webhook and board or bot, event type,
 * delivery id, the local answer and its duration), or one JSON object a line with --json; the
 * notices at most once a minute each; the summary when it stops.
 */

export interface Tally {
  answered2xx: number;
  answeredOther: number;
  unanswered: number;
  skipped: number;
}

export function newTally(): Tally {
  return { answered2xx: 0, answeredOther: 0, unanswered: 0, skipped: 0 };
}

export function count(tally: Tally, result: ForwardResult): void {
  if (result.status === undefined) tally.unanswered++;
  else if (result.status >= 200 && result.status < 300) tally.answered2xx++;
  else tally.answeredOther++;
}

function answerText(result: ForwardResult): string {
  if (result.status === undefined) return `not sent: ${result.failure ?? 'no answer'}`;
  return `${result.status}${result.code === undefined ? '' : ` ${result.code}`} in ${result.durationMs} ms`;
}

export function deliveryLine(delivery: StreamedDelivery, result: ForwardResult, json: boolean, now: Date): string {
  if (json)
    return terminalJson(
      {
        time: now.toISOString(),
        seq: delivery.seq,
        webhook: delivery.webhook,
        [delivery.webhook === 'board' ? 'boardId' : 'botId']: delivery.scope,
        type: delivery.type,
        deliveryId: delivery.id,
        status: result.status ?? null,
        ...(result.code === undefined ? {} : { code: result.code }),
        ...(result.failure === undefined ? {} : { failure: result.failure }),
        durationMs: result.durationMs,
        mirrored: delivery.mirror,
      },
      0,
    );
  const mirrored = delivery.mirror ? ' (svc gets this answer)' : '';
  return `${now.toISOString()} ${delivery.webhook} ${printable(delivery.scope)} ${printable(delivery.type)} ${printable(delivery.id)} -> ${answerText(result)}${mirrored}\n`;
}

export function summaryLine(tally: Tally, json: boolean): string {
  const handed = tally.answered2xx + tally.answeredOther + tally.unanswered;
  if (json)
    return terminalJson(
      {
        summary: {
          forwarded: handed,
          answered2xx: tally.answered2xx,
          answeredOther: tally.answeredOther,
          unanswered: tally.unanswered,
          skipped: tally.skipped,
        },
      },
      0,
    );
  return `forwarded ${handed}: ${tally.answered2xx} answered 2xx, ${tally.answeredOther} answered otherwise, ${tally.unanswered} not answered; ${tally.skipped} skipped by the filters\n`;
}

/** Says a condition once, then again at most once per `intervalMs`, with how often it recurred meanwhile. */
export class Notices {
  private readonly last = new Map<string, { at: number; repeated: number }>();

  constructor(
    private readonly write: (line: string) => void,
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  notice(key: string, text: string): void {
    const at = this.now();
    const last = this.last.get(key);
    if (last !== undefined && at - last.at < this.intervalMs) {
      last.repeated++;
      return;
    }
    const again = last !== undefined && last.repeated > 0 ? ` (${last.repeated} more times since the last notice)` : '';
    this.last.set(key, { at, repeated: 0 });
    this.write(`${text}${again}`);
  }

  recovered(key: string, text: string): void {
    if (this.last.delete(key)) this.write(text);
  }
}
