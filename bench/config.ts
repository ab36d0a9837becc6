/**
 * How long and how hard each part runs. The full run fits in about ten minutes on two cores; the
 * smoke run (CI) checks in a few seconds that every stack answers 2xx and every part still works.
 */
import { BODY_SIZES, type BodySize } from './bodies';

export interface BenchConfig {
  readonly smoke: boolean;
  readonly sizes: readonly BodySize[];
  /** Rounds of the load runs; figures are medians over rounds. */
  readonly rounds: number;
  readonly warmupSeconds: number;
  readonly measureSeconds: number;
  /** Cells run side by side: 1 for measuring; the smoke run uses 2 to finish sooner. */
  readonly lanes: number;
  /** Concurrent keep-alive connections of the load generator. */
  readonly connections: number;
  /** A cell during which other processes used more than this many cores is run again... */
  readonly maxOtherCores: number;
  /** ...at most this many times, and at most `retryBudget` times in the whole run. */
  readonly retries: number;
  readonly retryBudget: number;
  /** Profiled load runs of svc-webhooks, to show where its time goes. */
  readonly profile: boolean;
  /** Process starts per stack in the startup benchmark. */
  readonly startupRuns: number;
  /** Fresh processes per entry point in the cold-load benchmark. */
  readonly coldLoadRuns: number;
  /** Iterations per timed batch of the stage micro benchmark, per body size. */
  readonly stageIterations: Record<BodySize, number>;
  readonly stageBatches: number;
  /** Ids remembered before the de-dup store is measured. */
  readonly storeIds: number;
  readonly storeOps: number;
}

export const FULL: BenchConfig = {
  smoke: false,
  sizes: BODY_SIZES,
  // Even: each pair of stacks runs as often one way round as the other.
  rounds: 4,
  warmupSeconds: 1,
  measureSeconds: 3,
  lanes: 1,
  connections: 10,
  maxOtherCores: 0.15,
  retries: 1,
  retryBudget: 16,
  profile: true,
  startupRuns: 9,
  coldLoadRuns: 15,
  stageIterations: { '2kb': 4_000, '256kb': 30 },
  stageBatches: 7,
  storeIds: 1_000_000,
  storeOps: 200_000,
};

export const SMOKE: BenchConfig = {
  smoke: true,
  sizes: BODY_SIZES,
  rounds: 1,
  warmupSeconds: 0,
  measureSeconds: 0.2,
  lanes: 2,
  connections: 2,
  maxOtherCores: Number.POSITIVE_INFINITY,
  retries: 0,
  retryBudget: 0,
  profile: false,
  startupRuns: 1,
  coldLoadRuns: 1,
  stageIterations: { '2kb': 200, '256kb': 5 },
  stageBatches: 1,
  storeIds: 20_000,
  storeOps: 2_000,
};
