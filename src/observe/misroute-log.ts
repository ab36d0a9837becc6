import type { WebhookLogger } from '../internal/logger';
import { printable } from '../internal/printable';

/** At most one line per request path per interval. */
export const MISROUTE_LOG_INTERVAL_MS = 60_000;
// Paths a sender (or a scanner) posts to are not bounded: the oldest are forgotten first.
const MAX_PATHS = 1_000;

/**
 * A signed delivery that reached a webhook but matched no path, and was answered 404: without this
 * line a wrong mount or `path` loses every delivery in silence, until svc disables the webhook.
 */
export class MisrouteLog {
  private readonly lastLogged = new Map<string, number>();

  constructor(
    private readonly logger: WebhookLogger,
    private readonly now: () => number,
  ) {}

  /** `came`: the path it was posted to; `answers`: the full paths the webhooks it passed answer. */
  misrouted(came: string, answers: readonly string[]): void {
    const path = printable(came, 200);
    const at = this.now();
    const last = this.lastLogged.get(path);
    if (last !== undefined && at - last < MISROUTE_LOG_INTERVAL_MS) return;
    if (last === undefined && this.lastLogged.size >= MAX_PATHS) this.lastLogged.delete(this.lastLogged.keys().next().value!);
    this.lastLogged.delete(path);
    this.lastLogged.set(path, at);
    this.logger.warn(
      { path, answers, option: 'path' },
      `a signed delivery to POST ${path} was answered 404: no webhook answers that path. This webhook answers ${answers.join(', ')}; point svc at that URL, or set the webhook's \`path\` option (relative to where it is mounted) to the path svc posts to`,
    );
  }
}
