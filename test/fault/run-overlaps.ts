/** Times come from different processes' clocks; they agree to well under a millisecond. */
export const CLOCK_SLACK_MS = 1;

/**
 * Sorts one delivery's runs by their start, and reports each run that started while another of them
 * was still running (the promise: never two at once). Returns how many did.
 */
export function reportOverlaps(id: string, runs: { readonly pid: number; readonly start: number; readonly end: number }[], violations: string[]): number {
  runs.sort((a, b) => a.start - b.start);
  let overlaps = 0;
  let busyUntil = -Infinity;
  for (const run of runs) {
    if (run.start + CLOCK_SLACK_MS < busyUntil) {
      overlaps++;
      violations.push(`two runs of ${id} overlap: one in pid ${run.pid} started while another was running`);
    }
    busyUntil = Math.max(busyUntil, run.end);
  }
  return overlaps;
}
