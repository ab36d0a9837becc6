import { config } from './config';
import type { FaultLog } from './faults';
import type { ReceiverSlot } from './receivers';
import type { SenderResult } from './sender';
import type { StoreKind, StoreServer } from './store-kind';
import { EXTRA_RUN_CAUSES, type Figures } from './verdict';

export interface Report {
  readonly kind: StoreKind;
  readonly store: StoreServer;
  readonly slots: readonly ReceiverSlot[];
  readonly sent: SenderResult;
  readonly faults: FaultLog;
  readonly figures: Figures;
  readonly seconds: number;
  readonly violations: readonly string[];
}

/** The figures of one run, as one block of lines. */
export function summary({ kind, store, slots, sent, faults, figures: f, seconds, violations }: Report): string {
  const statuses = Object.entries(f.statuses)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([status, n]) => `${status}: ${n}`)
    .join(', ');
  const extra = Object.values(f.extraRuns).reduce((a, b) => a + b, 0);
  const causes = (Object.keys(EXTRA_RUN_CAUSES) as Array<keyof typeof EXTRA_RUN_CAUSES>).map((c) => `${EXTRA_RUN_CAUSES[c]}: ${f.extraRuns[c]}`).join('; ');
  const lines = [
    `fault test, store ${kind.name} (${store.durability}): ${f.deliveries} deliveries to ${slots.length} receivers (${slots.map((s) => s.mount).join(', ')}), svc clock x${config.clockScale}, ${seconds.toFixed(1)} s`,
    `  sender:        ${sent.answers.length} requests (${statuses}); ${sent.repeats} repeats of delivered deliveries (${sent.upperCase} with the id in upper case), ${sent.concurrent} sent to two receivers at once; gave up on ${f.givenUp} deliveries, ${sent.repeatsGivenUp} repeats`,
    `  faults:        receivers killed -9: ${faults.receiverKills} (runs in flight cut: ${f.cutBeforeEffect} before their side effect, ${f.cutAfterEffect} after it); SIGTERM under load: ${faults.receiverTerms}; store SIGSTOP/SIGCONT: ${faults.storeFreezes}; store killed -9 and restarted: ${faults.storeKills}`,
    `  handler runs:  ${f.runs} (${f.failedRuns} failed and retried: ${f.rows === undefined ? 'injected failures' : 'injected failures and rolled-back transactions'})`,
    `  lost:          ${f.lost}`,
    `  2xx unhandled: ${f.unhandled2xx}`,
    `  overlapping:   ${f.overlaps}`,
    `  extra runs:    ${extra} (${causes})`,
    `  graceful close: ${f.closes} receivers closed by SIGTERM with ${f.inFlightAtClose} runs in flight; lost ${f.closeLost}`,
    `  commits lost:  ${f.commitsLost} (answered 2xx, not done in the store; besides ${f.commitsCut} whose receiver was killed -9 before its commit landed)`,
    ...(f.rows === undefined
      ? []
      : [
          `  effect rows:   ${f.rows.once} deliveries with exactly one row committed in ctx.transaction; lost ${f.rows.lost}, doubled ${f.rows.doubled} (the extra runs above wrote rows that were rolled back)`,
        ]),
    `  result:        ${violations.length === 0 ? 'PASS' : `FAIL, ${violations.length} violations:`}`,
    ...violations.slice(0, 20).map((v) => `    - ${v}`),
  ];
  if (violations.length > 20) lines.push(`    … and ${violations.length - 20} more`);
  return lines.join('\n');
}
