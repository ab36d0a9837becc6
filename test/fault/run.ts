/**
 * The multi-process fault test: `npm run test:fault [-- <run>...]` (default: every run): one run per
 * store kind (`redis`, `postgres`), described here, and `redis-cluster`, the inbox on a Redis Cluster
 * through a failover (cluster-run.ts).
 *
 * Real receiver processes (Express `app.use` and node:http `createNodeHandler`) share a real store
 * server; a sender drives a few thousand signed board deliveries at them on svc's retry schedule
 * (compressed clock), with repeats, while receivers are killed -9 with handlers in flight, one is
 * closed by SIGTERM, and the store is frozen, killed -9 and restarted. Then it checks, from what the
 * handlers recorded outside their processes, that no delivery was lost, none was answered 2xx
 * unhandled, no two runs of one overlapped, every extra run is explained by a kill between side
 * effect and commit, graceful closes lost nothing and no commit was lost. Exits 1 on any violation.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../support/net';
import { endAll } from './children';
import { config, mounts } from './config';
import { runFaults, type FaultLog } from './faults';
import { ReceiverSlot } from './receivers';
import { Sender, type Answer } from './sender';
import type { StoreKind, StoreServer } from './store-kind';
import { storeKinds } from './stores';
import { runClusterFailover } from './cluster-run';
import { summary } from './summary';
import { judge, type Figures } from './verdict';

async function runAgainst(kind: StoreKind): Promise<boolean> {
  const dir = mkdtempSync(join(tmpdir(), `svc-webhooks-fault-${kind.name}-`));
  const started = performance.now();
  let passed = false;
  let store: StoreServer | undefined;
  try {
    store = await kind.start(dir);
    const slots: ReceiverSlot[] = [];
    for (const mount of mounts) slots.push(new ReceiverSlot(mount, await freePort(), dir, { FAULT_STORE: kind.name, ...store.receiverEnv }));
    await Promise.all(slots.map((s) => s.start()));

    const sender = new Sender(slots.map((s) => s.url));
    const budget = setTimeout(() => sender.stop(), config.budgetMs);
    let sending = true;
    const [sent, faults] = await Promise.all([sender.run().finally(() => (sending = false)), runFaults(store, slots, () => !sending)]);
    clearTimeout(budget);

    // Every receiver closes gracefully, so that what it still commits is in the store when read.
    await Promise.all(slots.map((s) => s.terminate(0)));
    const states = await store.states(sent.ids);
    const effectRows = await store.effectRows?.(sent.ids);
    const receivers = slots.flatMap((s) => s.records());
    const verdict = judge({
      ids: sent.ids,
      givenUp: sent.givenUp,
      answers: sent.answers,
      receivers,
      states,
      leaseMs: config.leaseMs,
      ...(effectRows === undefined ? {} : { effectRows }),
    });
    const violations = [...verdict.violations];
    if (sent.givenUp.length > 0) violations.push(`the sender gave up on ${sent.givenUp.length} deliveries after a day of retries`);
    if (sent.repeatsGivenUp > 0) violations.push(`the sender gave up on ${sent.repeatsGivenUp} repeats of delivered deliveries after a day of retries`);
    violations.push(...unbitten(verdict.figures, faults));
    const recovery = slowestRecovery(sent.answers, faults.storeBack);
    if (recovery > RECOVERY_MS)
      violations.push(
        `a store fault kept deliveries from being answered 2xx for ${(recovery / 1000).toFixed(1)} s after the store was back (at most ${RECOVERY_MS / 1000} s)`,
      );
    if (performance.now() - started > config.budgetMs) violations.push(`the run took longer than its budget of ${config.budgetMs} ms`);
    console.log(summary({ kind, store, slots, sent, faults, figures: verdict.figures, seconds: (performance.now() - started) / 1000, violations }));
    console.log(
      `  store back:    the first 2xx came at most ${(recovery / 1000).toFixed(1)} s after the store was back from a fault (${faults.storeBack.length} faults)`,
    );
    passed = violations.length === 0;
    return passed;
  } finally {
    await store?.close().catch(() => undefined);
    await endAll();
    if (passed && process.env.FAULT_KEEP === undefined) rmSync(dir, { recursive: true, force: true });
    else console.log(`receiver logs and effect files kept in ${dir}`);
  }
}

// A store back from a freeze or a restart must serve again within seconds: slower, and a short
// outage costs a delivery most of its day of retries.
const RECOVERY_MS = 10_000;

/**
 * The longest time from the store's return from a fault to the first delivery sent after it that
 * was answered 2xx (which needs the store: the claim). A fault after which nothing more was sent
 * counts 0.
 */
function slowestRecovery(answers: readonly Answer[], storeBack: readonly number[]): number {
  let slowest = 0;
  for (const back of storeBack) {
    const first = Math.min(...answers.filter((a) => a.sentAt >= back && a.status >= 200 && a.status < 300).map((a) => a.answeredAt));
    if (Number.isFinite(first)) slowest = Math.max(slowest, first - back);
  }
  return slowest;
}

/** A run whose faults hit nothing proves nothing: say so rather than pass. */
function unbitten(f: Figures, faults: FaultLog): string[] {
  const problems: string[] = [];
  if (faults.receiverKills === 0 || f.cutBeforeEffect + f.cutAfterEffect === 0) problems.push('no kill -9 cut a handler run in flight');
  if (faults.receiverTerms === 0 || f.inFlightAtClose === 0) problems.push('no SIGTERM came with handler runs in flight');
  if (faults.storeFreezes === 0 || faults.storeKills === 0 || !Object.keys(f.statuses).some((s) => s.endsWith('store_unavailable'))) {
    problems.push('the store faults did not reach the receivers');
  }
  if (!Object.keys(f.statuses).includes('200 duplicate')) problems.push('no repeat was answered as a duplicate');
  return problems;
}

/** Every run by name: one per store kind, and the inbox on a Redis Cluster through a failover. */
const runs: ReadonlyMap<string, () => Promise<boolean>> = new Map([
  ...[...storeKinds.values()].map((kind) => [kind.name, () => runAgainst(kind)] as const),
  ['redis-cluster', runClusterFailover] as const,
]);

async function main(): Promise<void> {
  const names = process.argv.slice(2);
  for (const name of names) if (!runs.has(name)) throw new Error(`unknown run "${name}"; known: ${[...runs.keys()].join(', ')}`);
  let failed = false;
  for (const name of names.length > 0 ? names : [...runs.keys()]) {
    if (!(await runs.get(name)!())) failed = true;
  }
  process.exitCode = failed ? 1 : 0;
}

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    void endAll().finally(() => process.exit(130));
  });
}

main().catch(async (err: unknown) => {
  console.error(err);
  await endAll();
  process.exitCode = 1;
});
