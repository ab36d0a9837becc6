import { webhookSecretProblem } from '../client/webhook-secret';
import { classify, displayUrl, type Observation } from './classify-state';
import { probe } from './probe';
import type { WatchClient } from './watch-options';
import type { WebhookStatus } from './watch-types';

/** How long a re-enable by hand waits for svc's Retry-After on the ping, at most. */
const MAX_PING_WAIT_MS = 15_000;

export interface ReenableOnceInput {
  readonly client: WatchClient;
  readonly boardId: string;
  /** The secret the receiver verifies with: the PUT carries it, so svc keeps (or takes) it. */
  readonly secret: string;
  /**
   * The URL the webhook should deliver to: the secret is PUT only when svc holds it (scheme, host,
   * port and path; not the query). Undefined: nothing is PUT, and the URL svc holds is told.
   */
  readonly expectedUrl: string | undefined;
  /** Waits, for svc's Retry-After on the ping. */
  readonly sleep: (ms: number) => Promise<void>;
  readonly now?: () => number;
}

/** What a re-enable by hand did, step by step, and the status svc reported last. */
export type ReenableOnceResult = {
  readonly outcome: 'reenabled' | 'not_disabled' | 'missing' | 'unreachable' | 'misdirected' | 'url_unconfirmed' | 'probe_failed' | 'put_failed';
  readonly status: WebhookStatus;
  /** One line per step taken, for people. */
  readonly steps: readonly string[];
};

/**
 * The watcher's re-enable, once, by hand (`svc-webhooks board-webhook reenable <id> --url <url>`): the board
 * webhook must be disabled, and svc must hold `expectedUrl` (the PUT carries the secret there: with
 * another URL, or none expected, nothing is sent and the URL svc holds is told); svc's ping must reach the receiver (a 429's Retry-After is waited for,
 * once); then one PUT of the same URL with `secret`, never without one; then svc's state again.
 */
export async function reenableOnce(input: ReenableOnceInput): Promise<ReenableOnceResult> {
  const { client, boardId, secret } = input;
  const now = input.now ?? Date.now;
  const problem = webhookSecretProblem(secret);
  if (problem !== undefined) throw new TypeError(`the webhook secret is refused: ${problem}`);
  const target = { webhook: 'board' as const, boardId };
  const { expectedUrl } = input;
  const read = async (previous?: WebhookStatus) => classify({ target, observation: await observe(client, boardId), previous, now: now(), expectedUrl });
  const steps: string[] = [];
  const before = await read();
  if (before.status.state === 'missing') return { outcome: 'missing', status: before.status, steps };
  if (before.status.state === 'unreachable') return { outcome: 'unreachable', status: before.status, steps };
  if (before.status.state === 'misdirected') {
    const what = `not re-enabled: svc holds ${before.status.url}, not ${before.status.expectedUrl}; the PUT would send your secret there`;
    return { outcome: 'misdirected', status: before.status, steps: [what] };
  }
  if (before.status.state !== 'disabled') return { outcome: 'not_disabled', status: before.status, steps };
  if (before.rawUrl === undefined) return { outcome: 'put_failed', status: before.status, steps: ["svc's state holds no URL to PUT again"] };
  if (expectedUrl === undefined) {
    const what = `not re-enabled: svc holds ${displayUrl(before.rawUrl)}; the PUT would send your secret there: confirm it is your receiver's with --url <that URL>`;
    return { outcome: 'url_unconfirmed', status: before.status, steps: [what] };
  }
  const probeInput = { target: { ...target, url: before.rawUrl }, client, custom: undefined, fetch: globalThis.fetch };
  let found = await probe(probeInput);
  if (found.kind === 'wait' && found.ms <= MAX_PING_WAIT_MS) {
    steps.push(`svc rate-limited the ping (429): waiting ${Math.ceil(found.ms / 1000)} s as it asked`);
    await input.sleep(found.ms);
    found = await probe(probeInput);
  }
  if (found.kind !== 'answered') {
    steps.push(
      found.kind === 'wait'
        ? `svc rate-limited the ping (429) for ${Math.ceil(found.ms / 1000)} s more; try again then`
        : `not re-enabled: the receiver did not answer the ping (${found.detail})`,
    );
    return { outcome: 'probe_failed', status: before.status, steps };
  }
  steps.push(`pinged: ${found.detail}`);
  try {
    const result = await client.setBoardWebhook(boardId, { url: before.rawUrl, secret });
    if (result.generatedSecret !== undefined) steps.push('warning: svc answered with a generated secret, though one was sent');
  } catch (err) {
    steps.push(`the PUT failed: ${(err as Error).message}`);
    return { outcome: 'put_failed', status: before.status, steps };
  }
  steps.push('re-enabled: PUT of the same URL with your secret (kept, not regenerated)');
  const after = await read(before.status);
  return { outcome: 'reenabled', status: after.status, steps };
}

async function observe(client: WatchClient, boardId: string): Promise<Observation> {
  try {
    const body = await client.getBoardWebhook(boardId);
    return body === null ? { kind: 'missing' } : { kind: 'state', body };
  } catch (error) {
    return { kind: 'error', error };
  }
}
