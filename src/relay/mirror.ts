/**
 * `relay --mirror <listener>`: svc is answered with what that listener's local receiver answered.
 * The relay waits for the listener's report of a delivery (by sequence number) up to a deadline
 * inside svc's 10 s; no report in time is a 504.
 */

/** What a listener reports of one mirrored delivery: the local status, or 0 when the receiver did not answer. */
export interface MirrorAnswer {
  readonly status: number;
}

export class MirrorWaits {
  private readonly waiting = new Map<number, (answer: MirrorAnswer) => void>();

  constructor(readonly listener: string) {}

  /** The listener's answer for `seq`, or undefined when none came within `ms`. */
  wait(seq: number, ms: number): Promise<MirrorAnswer | undefined> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(seq);
        resolve(undefined);
      }, ms);
      this.waiting.set(seq, (answer) => {
        clearTimeout(timer);
        this.waiting.delete(seq);
        resolve(answer);
      });
    });
  }

  /** A report from `listener`; false when nothing waits for it (late, or another listener's). */
  answer(listener: string, seq: number, answer: MirrorAnswer): boolean {
    if (listener !== this.listener) return false;
    const done = this.waiting.get(seq);
    if (done === undefined) return false;
    done(answer);
    return true;
  }
}

/** The status svc gets for a mirrored delivery: the local one, 502 when the receiver did not answer, 504 with no report in time. */
export function mirroredStatus(answer: MirrorAnswer | undefined): number {
  if (answer === undefined) return 504;
  if (answer.status === 0) return 502;
  return answer.status;
}
