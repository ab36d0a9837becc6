import type { SvcTime, WebhookStatus } from './watch-types';

type Unsummarised = Omit<WebhookStatus, 'summary'>;

/** One line for people saying what the state means for events, as logs and the CLI show it. */
export function describeStatus(status: Unsummarised, now: number): string {
  switch (status.state) {
    case 'healthy':
      return `healthy: delivering${pending(status)}`;
    case 'failing':
      return `failing since ${when(status.failingSince)}: ${disabling(status, now)}${pending(status)}; last error: ${status.lastError ?? 'none given'}`;
    case 'disabled':
      return `disabled by svc${status.disabledAt === undefined ? '' : ` at ${when(status.disabledAt)}`}: its queue was dropped, and nothing is delivered until it is re-enabled (PUT)`;
    case 'paused':
      return `paused by svc (pausedReason ${status.pausedReason}${status.pausedReason === 'PLAN' ? ': the plan dropped below Business' : ', a reason the spec does not list'}): new events are not queued`;
    case 'missing':
      return 'no webhook: svc answered 404 (deleted, its queue marked failed, or never set)';
    case 'misdirected':
      return `misdirected: svc delivers to ${status.url ?? 'an unknown URL'}, not to the expected ${status.expectedUrl ?? 'URL'}${status.svcState === undefined ? '' : ` (svc reports it ${status.svcState})`}: its events go elsewhere; set the URL again (PUT), it is never re-enabled there`;
    default:
      return `state unknown: ${unreachable(status)}`;
  }
}

function unreachable(status: Unsummarised): string {
  switch (status.reason) {
    case 'unauthorized':
      return "svc refused the watcher's token (401: revoked or expired?)";
    case 'forbidden':
      return 'svc refused the watcher access (403: the token may not manage this webhook)';
    case 'timeout':
      return 'svc did not answer in time';
    case 'network_error':
      return `svc could not be reached${status.problem === undefined ? '' : ` (${status.problem})`}`;
    case 'svc_api_error':
      return `svc answered ${status.httpStatus ?? 'an error'}`;
    case 'invalid_response':
      return 'svc answered with something that is not JSON';
    case 'malformed_state':
      return 'svc answered with a state that cannot be read (`enabled` is neither true nor false)';
    case 'rate_limited':
      return 'svc kept answering 429 (rate limited)';
    default:
      return `the call to svc failed${status.problem === undefined ? '' : ` (${status.problem})`}`;
  }
}

function disabling(status: Unsummarised, now: number): string {
  if (status.disablesAt === undefined) return 'svc disables it a day after that, dropping its queue';
  if (status.disablesAt <= now) return 'svc disables it any moment now, dropping its queue';
  return `svc disables it in about ${duration(status.disablesAt - now)} (at ${new Date(status.disablesAt).toISOString()}), dropping its queue`;
}

function pending(status: Unsummarised): string {
  return status.pending === undefined ? '' : `, ${status.pending} pending`;
}

/** A time of svc's state: ISO 8601 when it could be read, else as it came. */
export function when(time: SvcTime | undefined): string {
  if (time === undefined) return 'an unknown time';
  return time.ms === undefined ? `"${time.raw}" (a time format not read)` : new Date(time.ms).toISOString();
}

/** 250 ms, 45 s, 12 min, 3 h 5 min, 2 d 4 h. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return min % 60 === 0 ? `${h} h` : `${h} h ${min % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}
