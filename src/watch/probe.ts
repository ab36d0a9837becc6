import { isSvcClientError } from '../client/svc-client-error';
import { webhookUrlProblem } from '../client/webhook-url';
import { displayUrl } from './classify-state';
import { printable } from '../internal/logging/printable';
import type { ProbeTarget, WatchClient } from './watch-options';
import { within } from './within';

/** svc waits 10 s for a receiver; a probe waits as long. */
const PROBE_TIMEOUT_MS = 10_000;

/** What a probe found: the receiver answered, svc asked to wait (429), or it did not answer. */
export type ProbeResult =
  | { readonly kind: 'answered'; readonly detail: string }
  | { readonly kind: 'wait'; readonly ms: number }
  | { readonly kind: 'failed'; readonly detail: string };

export interface ProbeInput {
  readonly target: ProbeTarget;
  readonly client: WatchClient;
  /** The user's probe, when given. */
  readonly custom: ((target: ProbeTarget) => unknown) | undefined;
  readonly fetch: typeof fetch;
}

/**
 * Checks that a disabled webhook's receiver answers, before it is re-enabled: the user's probe, or
 * svc's ping for a board (svc sends a signed `ping` event with the secret it holds, so a 2xx also
 * says the receiver verifies that secret), or for the bot (svc has no ping route) a POST of `{}`
 * without a signature to its URL, which a receiver answers with a refusal when it is up.
 */
export async function probe(input: ProbeInput): Promise<ProbeResult> {
  const { target } = input;
  try {
    if (input.custom !== undefined)
      return (await within(PROBE_TIMEOUT_MS, 'your probe', () => input.custom!(target))) === true
        ? answered('your probe said so')
        : failed('your probe said no');
    if (target.webhook === 'board') return await ping(input.client, target.boardId);
    return await knock(input.fetch, target.url);
  } catch (err) {
    if (isSvcClientError(err) && err.code === 'rate_limited') return { kind: 'wait', ms: (err.retryAfter ?? 10) * 1000 };
    return failed(describe(err));
  }
}

async function ping(client: WatchClient, boardId: string): Promise<ProbeResult> {
  const result = await client.pingBoardWebhook(boardId);
  if (result.ok === true) return answered(`svc's ping was answered ${shown(result.status)}`);
  const error = typeof result.error === 'string' && result.error !== '' ? `: ${printable(result.error, 200)}` : '';
  return failed(
    typeof result.status === 'number' && result.status > 0
      ? `svc's ping was answered ${result.status}${error}`
      : `svc's ping did not reach the receiver${error}`,
  );
}

/**
 * A receiver that is up refuses an unsigned request (400, 401, 403) or takes it; 404, 3xx and 5xx
 * say it is not there. Only to a public https:// URL, as svc would deliver to: never to this
 * machine or a private network, whatever URL svc's state holds.
 */
async function knock(fetchFn: typeof fetch, url: string): Promise<ProbeResult> {
  const refused = webhookUrlProblem(url);
  if (refused !== undefined) return failed(`not probed: the bot URL svc holds, ${displayUrl(url)}, is not a public https:// URL (${refused})`);
  const res = await fetchFn(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'svc-webhooks-watcher' },
    body: '{}',
    redirect: 'manual',
    signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
  });
  await res.body?.cancel().catch(() => undefined);
  const up = res.status < 500 && (res.status < 300 || res.status >= 400) && res.status !== 404;
  return up ? answered(`the receiver answered an unsigned request ${res.status}`) : failed(`the receiver answered ${res.status}`);
}

function answered(detail: string): ProbeResult {
  return { kind: 'answered', detail };
}

function failed(detail: string): ProbeResult {
  return { kind: 'failed', detail };
}

function shown(value: unknown): string {
  return printable(String(value), 20);
}

export function describe(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  const message = (err as { message?: unknown } | null)?.message;
  const text = typeof message === 'string' ? message : 'it failed';
  return printable(typeof code === 'string' ? `${code}: ${text}` : text, 300);
}
