/**
 * What would close each target a run does not meet. The reasoning comes from the profiles and stage
 * costs of the runs that led to it; the figures are this run's, so the text stays true when the
 * numbers move. Shown in BENCHMARKS.md only for targets not met.
 */
import type { StageReport } from './children/stages';
import type { Cell } from './load';
import type { ColdLoadResult } from './cold-load';
import type { StartupResult } from './startup';
import { fixed } from './stats';
import { figures, ratio } from './summary';
import type { InboxReport } from './inbox';
import type { Target } from './targets';

export interface NoteInputs {
  readonly targets: readonly Target[];
  readonly cells: readonly Cell[];
  readonly stages: readonly StageReport[];
  readonly startup: readonly StartupResult[];
  readonly inbox: InboxReport;
  readonly coldLoads?: readonly ColdLoadResult[];
}

function coldLoad(r: NoteInputs, name: string): number {
  return r.coldLoads?.find((c) => c.name === name)?.wallMs ?? Number.NaN;
}

function cpu(cells: readonly Cell[], stack: Parameters<typeof figures>[1], size: '2kb' | '256kb'): number {
  return figures(cells, stack, size).cpuUsPerRequest;
}

function stage(report: StageReport | undefined, prefix: string): number {
  return report?.stages.find((s) => s.stage.startsWith(prefix))?.us ?? Number.NaN;
}

function insideExpress(r: NoteInputs): string {
  const floor = cpu(r.cells, 'express-floor', '2kb');
  const expressTax = floor - cpu(r.cells, 'node-floor', '2kb');
  const octokit = cpu(r.cells, 'octokit-express', '2kb') - floor;
  const svc = cpu(r.cells, 'svc-board-express', '2kb') - floor;
  const logLine = cpu(r.cells, 'svc-board-express', '2kb') - cpu(r.cells, 'svc-board-express-unlogged', '2kb');
  const onNode = cpu(r.cells, 'svc-board-node', '2kb') - cpu(r.cells, 'node-floor', '2kb');
  const small = r.stages.find((s) => s.size === '2kb');
  // 1.1x octokit's req/s on a CPU-bound server is at most 1/1.1 of its CPU per request.
  const allowed = cpu(r.cells, 'octokit-express', '2kb') / 1.1 - floor;
  const front = ratio(r.cells, '2kb', 'svc-board-front', 'octokit-express', 'rps');
  return [
    `Where the time goes: the Express floor costs ${fixed(floor, 0)} µs of CPU per request, ${fixed(expressTax, 0)} µs of it Express itself (over the node:http floor). Over that floor @octokit/webhooks adds ${fixed(octokit, 0)} µs and svc-webhooks ${fixed(svc, 0)} µs: the log line ${fixed(logLine, 0)} µs (the logging-off stack), and the work octokit does not do: schema validation (${fixed(stage(small, 'validate'), 1)} µs in the stage table), de-dup (${fixed(stage(small, 'de-dup'), 1)} µs), the delivery id, sequence and header checks, the body's deadline, and the pipeline's promise chain, each dearer inside Express, which swaps the prototypes of \`req\` and \`res\` (the same pipeline on node:http costs ${fixed(onNode, 0)} µs over the node floor).`,
    `The goal leaves the default mount ${fixed(allowed, 0)} µs over the Express floor (1.1× octokit's req/s on a CPU-bound server is 1/1.1 of its CPU per request), less than octokit's own ${fixed(octokit, 0)} µs: it would take a receiver that does less than octokit while doing more. What reaches that speed with an Express app today is the in-front mount, \`http.createServer(createNodeHandler(svcBoardWebhook(secret), app))\`, measured here at ${fixed(front, 2)}× @octokit/webhooks.`,
    `Level with octokit (1.0× its req/s at no more CPU) leaves the default mount octokit's own ${fixed(octokit, 0)} µs over the Express floor for all that it does; the accounting of both under "Where the time goes" splits each stack's CPU per request by package and svc-webhooks' own by file.`,
  ].join(' ');
}

function large(r: NoteInputs, label: string): string {
  const big = r.stages.find((s) => s.size === '256kb');
  return `At 250 KB the floor's time is decoding and JSON.parse (stage table: ${fixed(big?.stages.find((s) => s.stage.startsWith('parse'))?.floorUs, 0)} µs of ${fixed(big?.floorWholeUs, 0)} µs); svc-webhooks decodes faster than the floor but adds schema validation (${fixed(stage(big, 'validate'), 0)} µs), the forbidden-key walk and the fixed per-delivery costs of the 2 KB case${label === 'Express' ? ', each taxed by Express as described above' : ''}. Run-to-run spread at this size is about ±10 % (see the per-round figures printed by the run). What would close it: the per-delivery savings listed for the 2 KB targets, and validating only the fields handlers read (the Task schema is most of the 250 KB event's validation).`;
}

function startupNote(r: NoteInputs): string {
  const parts = (svc: string, floor: string) => {
    const s = r.startup.find((x) => x.stack === svc)?.marks ?? {};
    const f = r.startup.find((x) => x.stack === floor)?.marks ?? {};
    const d = (k: string) => (s[k] ?? Number.NaN) - (f[k] ?? Number.NaN);
    const built = (s.created ?? Number.NaN) - (s.loaded ?? Number.NaN);
    const first = (s.firstResponse ?? Number.NaN) - (s.listening ?? Number.NaN) - ((f.firstResponse ?? Number.NaN) - (f.listening ?? Number.NaN));
    return `+${fixed(d('firstResponse'), 0)} ms over its floor: ${fixed(d('loaded'), 0)} ms more to load its modules, ${fixed(built, 0)} ms to build the middleware, ${fixed(first, 0)} ms more than the floor on the first delivery`;
  };
  const rawBody = coldLoad(r, 'raw-body-require');
  return (
    `The installed package, on Express 5: ${parts('svc-board-express', 'express-floor')}; on node:http: ${parts('svc-board-node', 'node-floor')}. ` +
    `Loading means dist/index.js (${fixed(coldLoad(r, 'svc-require'), 0)} ms for require('svc-webhooks') in the cold-load table). Building the middleware reads the schema validators (a 200 KB file) and loads node:crypto for the secret's key, which the floors load on their first delivery. pino is off the path: the default logger loads it once the event loop turns after its first line, so after the first answer (${fixed(coldLoad(r, 'pino-require'), 0)} ms alone in the cold-load table). ` +
    `The first delivery loads raw-body (${fixed(rawBody, 0)} ms alone, most of it its dependencies http-errors and iconv-lite) and runs the pipeline's code for the first time. raw-body, a chosen dependency, takes that much of the 25 ms the target allows over the floor. ` +
    `What would close it: a Node body reader without raw-body's dependencies; on Node 22, the module compile cache (NODE_COMPILE_CACHE), which Node 20 lacks.`
  );
}

function coldLoadNote(r: NoteInputs): string {
  return (
    `require('svc-webhooks') of the same bundle takes ${fixed(coldLoad(r, 'svc-require'), 1)} ms; an import goes through the ESM face (dist/index.mjs), which reaches the CommonJS bundle through Node's CommonJS translator (a module of its own, dist/index.require.cjs, so that Node neither scans the bundle's 180 KB for export names with its JavaScript lexer nor reads every export, which would load every optional part). ` +
    `One module instance for import and require costs that translation; @octokit/webhooks is ESM only and its code is about 30 KB against the core bundle's 180 KB (compiling it is most of the rest; profiles: \`node --cpu-prof -e "import('svc-webhooks')"\` in the installed project). ` +
    `What would close it: a face that requires the bundle with createRequire(import.meta.url), about 1.3 ms less, under a Node-only export condition (bundlers cannot follow createRequire); or less code in the core bundle.`
  );
}

function fetchNote(r: NoteInputs): string {
  return (
    `Both handlers spend about half their CPU in @hono/node-server turning each node:http request into a Request and the Response back (undici's Request, an AbortSignal per request, makeTransferable). ` +
    `Over the floor, svc-webhooks spends ${fixed(cpu(r.cells, 'svc-board-web', '2kb') - cpu(r.cells, 'web-floor', '2kb'), 0)} µs of CPU per request: the log line (pino, about 5 % of its samples), the strict JSON parse with its forbidden-key walk, schema validation, de-dup and the dispatch's promise chain (src/parse/, src/route/dispatch.ts in the profile), the work the floor does not do. ` +
    `On Bun.serve, where the server's own cost is small, svc-webhooks takes ${fixed(cpu(r.cells, 'svc-board-bun', '2kb'), 0)} µs of CPU per request against the floor's ${fixed(cpu(r.cells, 'bun-floor', '2kb'), 0)} µs. A profile of it (\`bun --cpu-prof\`, stdout to /dev/null as here) puts about a third of Bun's CPU in the default logger's writes (sonic-boom's batched fs.write and its callback, dearer in Bun's node:fs than in node's), about an eighth in reading the body as a stream to bound its size (the floor reads \`arrayBuffer()\`), and the rest in the verification, the parse and its forbidden-key walk, schema validation and de-dup. ` +
    `What would close it: less work per request in src/parse/, src/validate/ and src/route/; \`npm run bench -- --only svc-board-web,web-floor --profile\` profiles both on node, and \`bun --cpu-prof\` a Bun server.`
  );
}

function largeVsOctokit(r: NoteInputs): string {
  const big = r.stages.find((s) => s.size === '256kb');
  const gap = cpu(r.cells, 'svc-board-express', '256kb') - cpu(r.cells, 'octokit-express', '256kb');
  return `At 250 KB both spend most of their time on the HMAC and JSON.parse of the body; svc-webhooks spends ${fixed(gap, 0)} µs more per request, of which schema validation is ${fixed(stage(big, 'validate'), 0)} µs (stage table) and the forbidden-key walk part of the parse stage. Run-to-run spread at this size is about ±10 %. What would close it: validating only the fields handlers read (the Task schema is most of the 250 KB event's validation).`;
}

function inboxNote(r: NoteInputs): string {
  const [heading, ...steps] = r.inbox.phases.map((line) => line.trim());
  const { inbox, floor, stalls } = r.inbox;
  const over2 = stalls.reduce((n, s) => n + (s.over[s.bounds.indexOf(2)] ?? 0), 0);
  const longest = Math.max(0, ...stalls.map((s) => s.longestMs));
  const machine =
    floor.p99 >= 5
      ? `The floor alone is over the goal: on this machine, under this load, not even a receiver that answers as soon as it has verified the delivery meets it. `
      : `The goal leaves the inbox ${fixed(5 - floor.p99, 2)} ms over its floor at the 99th percentile; its claim and enqueue before the answer take ${fixed(inbox.p99 - floor.p99, 2)} ms there. `;
  return (
    `Its floor (the same processes doing the same work, the receiver answering before the claim and the enqueue instead of after them) shows what is the machine's: the two Redis round trips the inbox makes before it answers (the claim in the store, BullMQ's add) cost ${fixed(inbox.p50 - floor.p50, 2)} ms at the median and ${fixed(inbox.p99 - floor.p99, 2)} ms at the 99th percentile. ${machine}` +
    `Both tails move from run to run on this machine; \`npx tsx bench/inbox.ts --latency --rounds 3\` measures the inbox and its floor side by side, round after round. ` +
    `The machine itself stalls processes for milliseconds: with nothing of the bench running, the stall probe was kept from running for over 2 ms ${over2} times in ${fixed(stalls[0]?.seconds ?? 0, 0)} s on the two cores, the longest ${fixed(longest, 2)} ms. ` +
    `These are other tasks of the machine taking the core (kernel threads such as DAMON's kdamond and the kworkers, the machine's own agent): the same probe alone on a core at real-time priority (\`taskset -c 0 chrt -f 50 node .bench/js/bench/children/stalls.js 20\`) sees no gap over 2 ms but the kernel's real-time throttling (50 ms each second). ` +
    `The bench cannot take that way out for the receiver: at real-time priority under load it keeps the kernel's own network work (ksoftirqd) and Redis from its core, and answers 503. ` +
    `Where the inbox's tail goes, from a traced measurement of this run (\`npx tsx bench/inbox.ts --latency --phases\`, the receiver's marks and the sender's on one clock; ${(heading ?? 'no traced figures').replace(/:$/, '')}): ${steps.join('; ')}. ` +
    `The tail is spread over every step, the receiver's own work before the claim included: the process waited, it did not compute. Two causes act on every step: the stalls above, and four busy processes (sender, receiver, redis-server, a worker with 1,000 handlers in flight) on two cores, so that any of them may wait for a core at any step; both act on the floor too, but each round trip to Redis before the answer is one more step at which to wait. ` +
    `What was tried without a gain: the claim and the enqueue sent together (one round trip instead of two); Redis over a Unix socket; the store's commit sent after the answer; a sender writing pre-built requests on raw sockets (it lowers the floor by about 0.7 ms, not the inbox); a smaller or larger young generation for the receiver (--max-semi-space-size 2, 4, 64; --min- and --max-semi-space-size 32 made it worse); single-threaded GC; the sender and redis-server at real-time priority; the sender pinned to either core, and no pinning at all. Redis's slow log (commands over 0.7 ms) held two entries over a measurement of 1,000 deliveries, so no long BullMQ script (lock renewals, stalled checks) holds Redis up. ` +
    `What would close it: a receiver and a Redis whose cores no other task takes, as on machines of their own in production, where a round trip's tail comes close to its median. On this machine no change to the work before the answer has moved the 99th percentile beyond its run-to-run spread.`
  );
}

function deliveryPathNote(): string {
  return (
    `\`npx tsx bench/delivery-path.ts --list\` names each file and the functions that ran. Besides the pipeline's own steps (the adapter, capture, verify, parse, validate, de-dup, route, report), the path runs five shared helpers of src/internal/ (headers, logger, path-pattern, request-scope, value-checks): the import rule makes the stages siblings, so what two stages use lives there, and each counts as a file. ` +
    `The context's classes and the route are one module (route/delivery-route.ts), and so are the validate stage's shared parts (validate/delivery-checks.ts: the schema check and the checks every policy keeps). ` +
    `What would close the rest: the claim's calls in dedup/claim.ts folded into each store's class (claim.ts holds the claim's whole life for the memory, Redis, Redis REST, Durable Object and PostgreSQL stores, 279 lines, so each store would carry its copy), the MAC beside the signature's headers (verify/mac.ts and verify/verify-signature.ts together pass the 300-line bound), and the five helpers of src/internal/ inlined into the stages that use them (each stage would then carry its own copy of the header reads and the value checks).`
  );
}

const NOTES: ReadonlyArray<[RegExp, (r: NoteInputs) => string]> = [
  [/ahead of @octokit\/webhooks at 250 KB/, largeVsOctokit],
  [/inside Express|the default mount \(board|the default Express mount level/, insideExpress],
  [/256 KB.*Express, vs/, (r) => large(r, 'Express')],
  [/256 KB.*node:http, vs/, (r) => large(r, 'node:http')],
  [/first 2xx/, startupNote],
  [/cold load of svc-webhooks/, coldLoadNote],
  [/Fetch handler \(createWebHandler\)/, fetchNote],
  [/inbox mode: time to 2xx/, inboxNote],
  [/passes ≤ \d+ files of src/, deliveryPathNote],
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
