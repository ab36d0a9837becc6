/**
 * The machine's total CPU time from /proc/stat, to tell how much CPU other processes took while a
 * cell was measured: the bench shares its two cores with whatever else runs, and a run that had to
 * share is repeated rather than trusted.
 */
import { readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** Busy CPU seconds of the whole machine so far (user, nice, system, and time stolen by the host). */
export function machineBusySeconds(): number | undefined {
  try {
    const fields = /^cpu\s+(.+)$/m.exec(readFileSync('/proc/stat', 'utf8'))![1]!.split(/\s+/).map(Number);
    const [user = 0, nice = 0, system = 0, , , , , steal = 0] = fields;
    return (user + nice + system + steal) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}
