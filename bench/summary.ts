/** Turns the cells of all rounds into one figure per stack and body size, and ratios between stacks. */
import type { BodySize } from './bodies';
import type { Cell } from './load';
import { median } from './stats';
import type { StackName } from './stacks/index';

export interface StackFigures {
  readonly stack: StackName;
  readonly size: BodySize;
  /** Rounds that measured; failures are listed instead. */
  readonly rounds: number;
  readonly failures: readonly string[];
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly cpuUsPerRequest: number;
  readonly peakRssMb: number;
  readonly loadgenCpuShare: number;
  readonly otherCores: number;
}

export type Metric = 'rps' | 'cpuUsPerRequest';

export function figures(cells: readonly Cell[], stack: StackName, size: BodySize): StackFigures {
  const mine = cells.filter((c) => c.stack === stack && c.size === size);
  const ok = mine.filter((c) => c.ok);
  const med = (pick: (c: Cell) => number) => median(ok.map(pick));
  return {
    stack,
    size,
    rounds: ok.length,
    failures: mine.filter((c) => !c.ok).map((c) => `round ${c.round}: ${c.problem}`),
    rps: med((c) => c.rps),
    p50Ms: med((c) => c.p50Ms),
    p99Ms: med((c) => c.p99Ms),
    cpuUsPerRequest: med((c) => c.cpuUsPerRequest),
    peakRssMb: med((c) => c.peakRssMb),
    loadgenCpuShare: med((c) => c.loadgenCpuShare),
    otherCores: med((c) => c.otherCores),
  };
}

/**
 * `a` over `b` for one metric: the median of the per-round ratios. Stacks of one round ran minutes
 * apart at most, so each round's ratio is the least affected by the machine's drift.
 */
export function ratio(cells: readonly Cell[], size: BodySize, a: StackName, b: StackName, metric: Metric): number {
  const ratios: number[] = [];
  for (const cell of cells) {
    if (cell.stack !== a || cell.size !== size || !cell.ok) continue;
    const other = cells.find((c) => c.stack === b && c.size === size && c.round === cell.round && c.ok);
    if (other !== undefined && other[metric] > 0) ratios.push(cell[metric] / other[metric]);
  }
  return median(ratios);
}
