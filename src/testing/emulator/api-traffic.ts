import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiRefusal } from './http-answer';

/** One request a client made to svc's routes (`/api/…`), as it arrived, and the status answered. */
export interface ApiRequest {
  readonly method: string;
  /** The path and query, as sent (percent-encoding kept). */
  readonly url: string;
  /** The request headers, Authorization included: for a test's assertions; the emulator never prints them. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
  /** The status answered; undefined until the answer is sent. */
  readonly status: number | undefined;
  /** When it arrived, in real ms since the epoch (`Date.now()`, whatever the emulator's clock). */
  readonly receivedAt: number;
  /** When its answer was sent, in real ms; undefined until then. */
  readonly answeredAt: number | undefined;
}

/** svc's API latency and rate limit, which the spec does not show: off unless set. */
export interface ApiTrafficOptions {
  /** Every answer of svc's routes waits this long (real ms), so a client's calls overlap. */
  apiDelayMs?: number;
  /** At most `perSecond` requests to svc's routes in any second; beyond, 429 with Retry-After. */
  apiRateLimit?: { perSecond: number; retryAfterSeconds: number };
  /** Keep every request for `requests()`; default true. Off for long runs (a benchmark), whose log would only grow. */
  recordRequests?: boolean;
}

/** What clients sent to svc's routes, and the pace svc takes them at. */
export class ApiTraffic {
  readonly requests: ApiRequest[] = [];
  readonly #options: ApiTrafficOptions;
  readonly #window: number[] = [];

  /** `options` as `createFakeSvc` checked them. */
  constructor(options: ApiTrafficOptions) {
    this.#options = options;
  }

  /** Records the request, then waits `apiDelayMs` and applies the rate limit (a 429 refusal). */
  async admit(req: IncomingMessage, res: ServerResponse, body: string): Promise<void> {
    const entry = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: { ...req.headers },
      body,
      status: undefined as number | undefined,
      receivedAt: Date.now(),
      answeredAt: undefined as number | undefined,
    };
    if (this.#options.recordRequests !== false) this.requests.push(entry);
    res.on('finish', () => Object.assign(entry, { status: res.statusCode, answeredAt: Date.now() }));
    const limit = this.#options.apiRateLimit;
    if (limit !== undefined) {
      const now = Date.now();
      while (this.#window.length > 0 && now - this.#window[0]! >= 1000) this.#window.shift();
      if (this.#window.length >= limit.perSecond) {
        throw new ApiRefusal(429, 'rate_limited', `at most ${limit.perSecond} requests per second`, { 'retry-after': String(limit.retryAfterSeconds) });
      }
      this.#window.push(now);
    }
    if (this.#options.apiDelayMs) await new Promise((resolve) => setTimeout(resolve, this.#options.apiDelayMs));
  }
}
