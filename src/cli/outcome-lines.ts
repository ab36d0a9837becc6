import { formatDuration } from './format';
import type { AttemptOutcome } from './post-delivery';

/** One attempt's outcome on a line: the status, the receiver's code, whether it was a duplicate, how long it took. */
export function describeOutcome(outcome: AttemptOutcome): string {
  const took = formatDuration(outcome.durationMs);
  if (outcome.error !== undefined) return `${outcome.error} after ${took}`;
  if (outcome.location !== undefined) return `${outcome.status} redirect to ${outcome.location}, not followed (a failure) in ${took}`;
  if (outcome.status !== undefined && outcome.status >= 300 && outcome.status < 400) return `${outcome.status} redirect, not followed (a failure) in ${took}`;
  const answer = outcome.duplicate ? ' ok, a duplicate' : outcome.ok ? ' ok' : '';
  return `${outcome.status}${outcome.code === undefined ? '' : ` ${outcome.code}`}${answer} in ${took}`;
}

/** Why a delivery failed, for the error line. */
export function failureSummary(outcome: AttemptOutcome): string {
  if (outcome.error !== undefined) return outcome.error;
  return `${outcome.status}${outcome.code === undefined ? '' : ` ${outcome.code}`}${outcome.message === undefined ? '' : `: ${outcome.message}`}`;
}
