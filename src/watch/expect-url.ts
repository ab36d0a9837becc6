import { webhookUrlProblem } from '../client/webhook-url';
import { printable } from '../internal/logging/printable';
import type { WatchedWebhook } from './watch-types';

/**
 * The URL each webhook should deliver to: one URL for every board webhook, or a function that
 * answers per webhook (undefined: that webhook's URL is not checked).
 */
export type ExpectUrl = string | ((target: WatchedWebhook) => string | undefined);

/**
 * Whether svc's `actual` URL delivers somewhere other than `expected`: another scheme, host (with
 * its port; a default port is the same as none) or path. The query, the fragment and credentials
 * are not compared: a query may carry a token or a routing hint that svc holds as it was given.
 * A path that differs only by a trailing slash is the same path (routers answer both). A URL that
 * cannot be read is somewhere else.
 */
export function isElsewhere(actual: string, expected: string): boolean {
  const a = destination(actual);
  const b = destination(expected);
  return a === undefined || b === undefined || a !== b;
}

function destination(value: string): string | undefined {
  try {
    const url = new URL(value);
    const path = url.pathname.length > 1 && url.pathname.endsWith('/') ? url.pathname.slice(0, -1) : url.pathname;
    return `${url.protocol}//${url.host}${path}`;
  } catch {
    return undefined;
  }
}

/** Why `value` cannot be an expected URL (svc holds only public https:// URLs), or undefined. */
export function expectUrlProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return 'it must be the https:// URL svc should deliver to';
  return webhookUrlProblem(value);
}

/** The expected URL of one webhook, or undefined (not checked), with why when the function's answer was refused. */
export interface Expected {
  readonly url: string | undefined;
  readonly problem?: string;
}

/**
 * The URL `target` should deliver to: for the bot, `bot.expectUrl`, else the function's answer; for
 * a board, the fixed `expectUrl`, or the function's answer. A function that throws or answers
 * something svc could not hold leaves the webhook unchecked, with the problem to log.
 */
export function expectedUrlOf(expectUrl: ExpectUrl | undefined, botExpectUrl: string | undefined, target: WatchedWebhook): Expected {
  if (target.webhook === 'bot' && botExpectUrl !== undefined) return { url: botExpectUrl };
  if (typeof expectUrl === 'string') return { url: target.webhook === 'board' ? expectUrl : undefined };
  if (expectUrl === undefined) return { url: undefined };
  let answer: unknown;
  try {
    answer = expectUrl(target);
  } catch (err) {
    return { url: undefined, problem: `expectUrl threw (${printable(err instanceof Error ? err.message : 'not an Error', 200)})` };
  }
  if (answer === undefined) return { url: undefined };
  const problem = expectUrlProblem(answer);
  return problem === undefined ? { url: answer as string } : { url: undefined, problem: `expectUrl answered a URL svc could not hold (${problem})` };
}
