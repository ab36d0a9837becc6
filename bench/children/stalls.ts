/**
 * The stall probe: does nothing but read the clock in a loop for `seconds`, and counts the gaps
 * between two readings, that is the times this process was kept from running. With nothing else
 * of the bench running, what it sees is the machine's own: its other tasks', the kernel's, the hypervisor's.
 * The loop allocates nothing once optimised, so no GC pause of its own shows as a stall.
 * Prints one JSON line: the gaps over each bound and the longest, in ms.
 */
const seconds = Number(process.argv[2] ?? '10');
const BOUNDS = [0.5, 1, 2, 4] as const;

function spin(ms: number): { over: number[]; longestMs: number } {
  const over = BOUNDS.map(() => 0);
  let longest = 0;
  const end = performance.now() + ms;
  let last = performance.now();
  while (last < end) {
    const now = performance.now();
    const gap = now - last;
    last = now;
    if (gap <= BOUNDS[0]) continue;
    for (let i = 0; i < BOUNDS.length; i++) if (gap > BOUNDS[i]!) over[i]!++;
    if (gap > longest) longest = gap;
  }
  return { over, longestMs: longest };
}

// A short first loop gets the function optimised; only the second one is counted.
spin(300);
const figures = spin(seconds * 1000);
process.stdout.write(`${JSON.stringify({ seconds, bounds: BOUNDS, ...figures })}\n`);

export {};
