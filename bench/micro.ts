/** Runs the in-process micro benchmarks (stages, de-dup store), each in its own pinned child. */
import type { StageReport } from './children/stages';
import type { StoreReport } from './children/store';
import type { BenchConfig } from './config';
import { Child } from './ipc';
import { childScript } from './paths';

const TIMEOUT_MS = 180_000;

export async function measureStages(config: BenchConfig): Promise<StageReport[]> {
  const child = Child.start('stage benchmark', childScript('children/stages'), { core: 0 });
  try {
    const reports: StageReport[] = [];
    for (const size of config.sizes) {
      reports.push(
        await child.request<StageReport>({ type: 'measure', size, iterations: config.stageIterations[size], batches: config.stageBatches }, TIMEOUT_MS),
      );
    }
    return reports;
  } finally {
    await child.stop();
  }
}

export async function measureStore(config: BenchConfig): Promise<StoreReport> {
  const child = Child.start('store benchmark', childScript('children/store'), { core: 0, nodeFlags: ['--expose-gc'] });
  try {
    return await child.request<StoreReport>({ type: 'measure', ids: config.storeIds, ops: config.storeOps }, TIMEOUT_MS);
  } finally {
    await child.stop();
  }
}
