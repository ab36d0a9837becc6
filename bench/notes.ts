/**
 * What would close each target a run does not meet. The reasoning comes from the profiles and stage
 * costs of the runs that led to it; the figures are this run's, so the text stays true when the
 * numbers move. Shown in BENCHMARKS.md only for targets not met.
 */
import type { StageReport } from './children/stages';
import type { Cell } from './load';
import type { StartupResult } from './startup';
import { fixed } from './stats';
import { figures, ratio } from './summary';
import type { Target } from './targets';

export interface NoteInputs {
  readonly targets: readonly Target[];
  readonly cells: readonly Cell[];
  readonly stages: readonly StageReport[];
  readonly startup: readonly StartupResult[];
}

function cpu(cells: readonly Cell[], stack: Parameters<typeof figures>[1], size: '2kb' | '256kb'): number {
  return figures(cells, stack, size).cpuUsPerRequest;
}

function stage(report: StageReport | undefined, prefix: string): number {
  return report?.stages.find((s) => s.stage.startsWith(prefix))?.us ?? Number.NaN;
}

function insideExpress(r: NoteInputs): string {
  const expressTax = cpu(r.cells, 'express-floor', '2kb') - cpu(r.cells, 'node-floor', '2kb');
  const svcTax = cpu(r.cells, 'svc-board-express', '2kb') - cpu(r.cells, 'svc-board-node', '2kb');
  const small = r.stages.find((s) => s.size === '2kb');
  const sum = small === undefined ? Number.NaN : small.stages.reduce((t, s) => t + s.us, 0);
  const orchestration = small === undefined ? Number.NaN : small.wholeUs - sum;
  const extra = small === undefined ? Number.NaN : small.wholeUs - small.floorWholeUs;
  const front = ratio(r.cells, '2kb', 'svc-board-front', 'octokit-express', 'rps');
  const frontFloor = ratio(r.cells, '2kb', 'svc-board-front', 'express-floor', 'rps');
  return [
    `Where the time goes (profiles below): Express costs the hand-written route ${fixed(expressTax, 0)} µs of CPU per request over plain node:http, and it costs the svc-webhooks pipeline ${fixed(svcTax, 0)} µs over the same pipeline on node:http. Express swaps the prototypes of \`req\` and \`res\` on every request, and every later operation on them is slower (attaching a listener to \`req\` goes from about 0.1 µs to about 1 µs), and so is all the code that runs on them: the more work a handler does on the request, the more Express taxes it.`,
    `The pipeline's own cost over the floor, measured in one process without sockets (stage table), is ${fixed(extra, 1)} µs per 2 KB delivery: routing ${fixed(stage(small, 'route'), 1)} µs (an AbortController, the handler deadline's timer, Promise.race and allSettled), the child logger and the log line ${fixed(stage(small, 'log'), 1)} µs, and ${fixed(orchestration, 1)} µs of orchestration (the async chain receive → process → claimDelivery → settleClaim and the delivery record); verify, parse, validate and de-dup are within a few µs of the floor.`,
    `What closes it: (1) receive deliveries in front of Express instead of inside it, \`http.createServer(createNodeHandler(svcBoardWebhook(secret), app))\` (src/middleware/node-handler.ts): measured here at ${fixed(front, 2)}× @octokit/webhooks and ${fixed(frontFloor, 2)}× the Express floor. (2) In src/receive and src/route, outside this change: run handlers without the deadline timer and Promise.race when they all return synchronously, create the AbortController and the per-delivery child logger only when a handler reads \`ctx.signal\` or \`ctx.log\`, take the memory store's synchronous answers without the async wrappers of src/dedup/claim.ts, and build the delivery record only when there are onDelivery listeners — most of the ${fixed(extra, 0)} µs. Inside Express the target would still need the pipeline within about ${fixed(0.1 * cpu(r.cells, 'express-floor', '2kb'), 0)} µs of the Express floor, which the Express tax on its extra work puts out of reach for this design; the front mount is the way to that speed with an Express app.`,
  ].join(' ');
}

function large(r: NoteInputs, label: string): string {
  const big = r.stages.find((s) => s.size === '256kb');
  return `At 250 KB the floor's time is decoding and JSON.parse (stage table: ${fixed(big?.stages.find((s) => s.stage.startsWith('parse'))?.floorUs, 0)} µs of ${fixed(big?.floorWholeUs, 0)} µs); svc-webhooks decodes faster than the floor but adds schema validation (${fixed(stage(big, 'validate'), 0)} µs), the forbidden-key walk and the fixed per-delivery costs of the 2 KB case${label === 'Express' ? ', each taxed by Express as described above' : ''}. Run-to-run spread at this size is about ±10 % (see the per-round figures printed by the run). What would close it: the per-delivery savings listed for the 2 KB targets, and validating only the fields handlers read (the Task schema is most of the 250 KB event's validation).`;
}

function startupNote(r: NoteInputs): string {
  const s = r.startup.find((x) => x.stack === 'svc-board-express');
  const floor = r.startup.find((x) => x.stack === 'express-floor');
  if (s === undefined || floor === undefined) return 'No startup figures in this run.';
  const m = s.marks;
  return `Node itself is ready ${fixed(m.entry, 0)} ms after process start and Express takes ${fixed((m.express ?? Number.NaN) - (m.entry ?? Number.NaN), 0)} ms to load (the Express floor sends its first 2xx ${fixed(floor.marks.firstResponse, 0)} ms after its process start); svc-webhooks adds ${fixed((m.loaded ?? Number.NaN) - (m.express ?? Number.NaN), 0)} ms of modules (pino is about 15 ms of it) and ${fixed((m.firstResponse ?? Number.NaN) - (m.listening ?? Number.NaN), 0)} ms for the first delivery (V8 compiling the code it runs for the first time). The time moves with the machine's state: runs of this bench measured it between about 115 and 170 ms, and Express's own load time moves with it. What would close it: load the modules the default setup does not use (the Redis store, the client) only when asked for (src/index.ts); ship a bundled build of the library with pino, so node resolves and wraps one file instead of dozens; and on Node 22, a compile cache (module.enableCompileCache()).`;
}

const NOTES: ReadonlyArray<[RegExp, (r: NoteInputs) => string]> = [
  [/inside Express/, insideExpress],
  [/256 KB.*Express, vs/, (r) => large(r, 'Express')],
  [/256 KB.*node:http, vs/, (r) => large(r, 'node:http')],
  [/first 2xx/, startupNote],
];

export function closingNotes(r: NoteInputs): string {
  const unmet = r.targets.filter((t) => t.met === false);
  const written = new Set<(r: NoteInputs) => string>();
  return unmet
    .map((t) => {
      const note = NOTES.find(([pattern]) => pattern.test(t.target))?.[1];
      // One explanation serves every target it covers; later ones point back to it.
      const text = note === undefined ? 'No analysis recorded for this target.' : written.has(note) ? 'Same cause and remedy as above.' : note(r);
      if (note !== undefined) written.add(note);
      return `- **${t.target}** — measured ${t.measured}. ${text}`;
    })
    .join('\n');
}
