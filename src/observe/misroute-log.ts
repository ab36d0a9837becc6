import type { WebhookLogger } from '../internal/logging/logger';
import { printable } from '../internal/logging/printable';

/** At most one line per request path per interval. */
export const MISROUTE_LOG_INTERVAL_MS = 60_000;
/**
 * And at most this many lines per interval over all paths: any request may carry the signature
 * header, so a scanner posting to many paths must not write a line for each.
 */
export const MAX_MISROUTE_LINES = 10;
/** A webhook is mounted at a few places at most: the lines of more are not written. */
const MAX_ANNOUNCED = 8;

/**
 * A signed delivery that reached a webhook but matched no path, and was answered 404: without this
 * line a wrong mount or `path` loses every delivery in silence, until svc disables the webhook.
 */
export class MisrouteLog {
  // Each path's last line, oldest first: only this interval's lines are kept, so at most MAX_MISROUTE_LINES.
  private readonly lastLogged = new Map<string, number>();
  private windowStart = Number.NEGATIVE_INFINITY;
  private linesInWindow = 0;
  /** Misrouted requests not logged since the last line. */
  private dropped = 0;
  /** The full paths `mounted` has logged. */
  private readonly announced = new Set<string>();

  constructor(
    private readonly logger: WebhookLogger,
    private readonly now: () => number,
  ) {}

  /** `came`: the path it was posted to; `answers`: the full paths the webhooks it passed answer. */
  misrouted(came: string, answers: readonly string[]): void {
    const path = printable(came, 200);
    const at = this.now();
    this.forgetBefore(at - MISROUTE_LOG_INTERVAL_MS);
    if (at - this.windowStart >= MISROUTE_LOG_INTERVAL_MS) {
      this.windowStart = at;
      this.linesInWindow = 0;
    }
    if (this.lastLogged.has(path) || this.linesInWindow >= MAX_MISROUTE_LINES) {
      this.dropped++;
      return;
    }
    this.lastLogged.set(path, at);
    this.linesInWindow++;
    const dropped = this.dropped;
    this.dropped = 0;
    // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: message text only; the count is the `dropped` field (test/mutation/EQUIVALENT.core.md)
    const more = dropped === 0 ? '' : ` (${dropped} more misrouted requests were not logged since the last such line)`;
    this.logger.warn(
      dropped === 0 ? { path, answers, option: 'path' } : { path, answers, option: 'path', dropped },
      `a signed delivery to POST ${path} was answered 404: no webhook answers that path. This webhook answers ${answers.join(', ')}; point svc at that URL, or set the webhook's \`path\` option (relative to where it is mounted) to the path svc posts to${more}`,
    );
  }

  /**
   * Where the webhook answers, once Express told its mount: one info line per full path (a
   * forgotten prefix, `app.use('/api', webhook)`, is then seen before svc's first delivery is lost).
   */
  mounted(fullPath: string, mountedAt: string): void {
    if (this.announced.has(fullPath) || this.announced.size >= MAX_ANNOUNCED) return;
    this.announced.add(fullPath);
    this.logger.info(
      { path: fullPath, mountedAt: mountedAt || '/' },
      `the webhook answers POST ${fullPath}${mountedAt === '' ? '' : ` (mounted at ${mountedAt})`}: that is the URL path svc must post to`,
    );
  }

  private forgetBefore(cutoff: number): void {
    for (const [path, at] of this.lastLogged) {
      if (at > cutoff) return;
      this.lastLogged.delete(path);
    }
  }
}
