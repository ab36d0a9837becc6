/**
 * The stage micro benchmark: each stage of the pipeline timed on its own, in one process, on the
 * same bodies as the load runs; next to each, what the hand-written floor does for the same step.
 * The whole middleware is timed too (on an in-memory request), so the gap between it and the sum of
 * the stages shows what the orchestration around them costs. It also checks that a forged 256 KB
 * request is refused before it is parsed. stdout is /dev/null, where the default logger writes.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import pino from 'pino';
import { svcBoardWebhook } from '../../src';
import { checkContentHeaders, readRawBody } from '../../src/capture/read-raw-body';
import { MemoryStore } from '../../src/dedup/memory-store';
import { NODE_REQUEST } from '../../src/adapters/node/node-request';
import { DeliveryTelemetry } from '../../src/observe/telemetry';
import { LOG_BATCH } from '../../src/internal/logging/webhook-loggers';
import { parseJson } from '../../src/parse/parse-json';
import { HandlerRegistry, boardRoute } from '../../src/route/delivery-route';
import { dispatch } from '../../src/route/dispatch';
import { boardDelivery } from '../../src/validate/board-delivery';
import type { BoardHandler } from '../../src/route/handler-types';
import { schemaProblems, validatorFor } from '../../src/validate/delivery-checks';
import { secretKeys } from '../../src/verify/secret-keys';
import { readBoardSignature, verifyBoardSignature } from '../../src/verify/verify-signature';
import { bodyTemplate, type BodySize } from '../bodies';
import { serveRequests, type Message } from '../ipc';
import { median } from '../stats';
import { deliveries, SVC_SECRET, type SignedDelivery } from '../signing';
import { readBody, verifyAndParse } from '../stacks/floor';
import { trivialHandler } from '../stacks/handler';
import { createListener as nodeFloor } from '../stacks/node-floor';

export interface StageTime {
  readonly stage: string;
  /** Median over batches, in microseconds per operation. */
  readonly us: number;
  /** The floor's cost for the same step, when it has one. */
  readonly floorUs?: number;
}

export interface StageReport {
  readonly size: BodySize;
  readonly stages: StageTime[];
  /** The whole middleware on one delivery, and the node floor's listener on one delivery. */
  readonly wholeUs: number;
  readonly floorWholeUs: number;
  readonly forged: { readonly us: number; readonly status: number; readonly parses: number } | undefined;
}

const CHUNK = 64 * 1024; // what a socket hands node per read on loopback

/** A request in memory: headers as node parses them, the body pushed in socket-sized chunks. */
function fakeRequest(delivery: SignedDelivery, path: string): IncomingMessage {
  const req = new Readable({ read() {} }) as Readable & Record<string, unknown>;
  const rawHeaders: string[] = [];
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries({ ...delivery.headers, 'Content-Length': String(delivery.body.length) })) {
    rawHeaders.push(name, value);
    headers[name.toLowerCase()] = value;
  }
  Object.assign(req, { method: 'POST', url: path, headers, rawHeaders });
  for (let at = 0; at < delivery.body.length; at += CHUNK) req.push(delivery.body.subarray(at, at + CHUNK));
  req.push(null);
  return req as unknown as IncomingMessage;
}

/** A response that records its status and resolves when it is ended. */
function fakeResponse(done: (status: number) => void): ServerResponse {
  const res = {
    statusCode: 0,
    headersSent: false,
    setHeader() {},
    writeHead(status: number) {
      res.statusCode = status;
    },
    end() {
      done(res.statusCode);
    },
  };
  return res as unknown as ServerResponse;
}

type Op = (i: number) => unknown;

/**
 * Median µs per call of each op over `batches` batches of `n` calls, after one untimed batch. The
 * ops take turns batch by batch, so a compared pair (a stage and its floor) sees the same state of
 * the process: heap size, GC pressure, CPU frequency.
 */
async function timeEach<K extends string>(n: number, batches: number, ops: Record<K, Op>): Promise<Record<K, number>> {
  const names = Object.keys(ops) as K[];
  const perBatch = Object.fromEntries(names.map((k) => [k, [] as number[]])) as Record<K, number[]>;
  for (let b = -1; b < batches; b++) {
    for (const name of names) {
      const op = ops[name];
      const start = process.hrtime.bigint();
      for (let i = 0; i < n; i++) {
        const r = op(i);
        if (r instanceof Promise) await r;
      }
      if (b >= 0) perBatch[name].push(Number(process.hrtime.bigint() - start) / 1000 / n);
    }
  }
  return Object.fromEntries(names.map((k) => [k, median(perBatch[k])])) as Record<K, number>;
}

async function time(n: number, batches: number, op: Op): Promise<number> {
  return (await timeEach(n, batches, { op })).op;
}

/** `count` distinct signed deliveries, each with its own copy of the body. */
function pool(count: number, size: BodySize, forge = false): SignedDelivery[] {
  const next = deliveries('svc-board', bodyTemplate('board', size), forge);
  return Array.from({ length: count }, () => {
    const d = next();
    return { headers: d.headers, body: Buffer.from(d.body) };
  });
}

const PATH = '/webhooks/board';

async function measure(size: BodySize, n: number, batches: number): Promise<StageReport> {
  const keys = secretKeys(SVC_SECRET);
  const one = pool(1, size)[0]!;
  const body = one.body;
  const payload = parseJson(body);
  const validate = validatorFor('board');
  const byType = new HandlerRegistry<BoardHandler<never>>();
  byType.add('task.updated', trivialHandler, () => undefined);
  const route = boardRoute({ byType, any: [] });
  const logger = pino({ name: 'svc-webhooks' }, pino.destination({ dest: 1, sync: false, ...LOG_BATCH })).child({ webhook: 'board' });
  const req = fakeRequest(one, PATH);
  const signature = readBoardSignature(req, 300, Date.now());
  // Fresh inputs per call where a stage keeps state or consumes its input.
  const total = n * (batches + 1);
  const ids = Array.from({ length: total }, (_, i) => `6f1c2a9e-0000-4000-8000-${String(i).padStart(12, '0')}`);
  const store = new MemoryStore({ maxIds: 10 * total });
  const fresh = pool(total, size);
  const forgedPool = size === '256kb' ? pool(total, size, true) : [];

  // Each stream-reading op takes requests from its own cursor, so interleaved batches do not share inputs.
  const cursors = { svc: 0, floor: 0, stream: 0, whole: 0, wholeFloor: 0, forged: 0 };
  const nextReq = (which: keyof typeof cursors) => fakeRequest(fresh[cursors[which]++ % fresh.length]!, PATH);
  const stages: StageTime[] = [];

  const read = await timeEach(n, batches, {
    svc: () => {
      const r = nextReq('svc');
      checkContentHeaders(r);
      return readRawBody(r, 512 * 1024);
    },
    floor: () => readBody(nextReq('floor')),
    stream: () => nextReq('stream'),
  });
  // The in-memory request itself is not part of either; take its cost out of both.
  stages.push({
    stage: 'capture (read the body: raw-body and the deadline; floor: a hand-written reader)',
    us: read.svc - read.stream,
    floorUs: read.floor - read.stream,
  });

  const verify = await timeEach(n, batches, {
    svc: () => verifyBoardSignature(keys, readBoardSignature(req, 300, Date.now()), body),
    floor: () => {
      const claimed = Buffer.from(one.headers['X-Svc-Signature']!.slice(3), 'hex');
      const mac = createHmac('sha256', SVC_SECRET).update(one.headers['X-Svc-Timestamp']!).update('.').update(body).digest();
      return timingSafeEqual(claimed, mac);
    },
  });
  stages.push({ stage: 'verify (headers, HMAC)', us: verify.svc, floorUs: verify.floor });

  const parse = await timeEach(n, batches, { svc: () => parseJson(body), floor: () => JSON.parse(body.toString('utf8')) });
  stages.push({ stage: 'parse (decode, JSON, key check)', us: parse.svc, floorUs: parse.floor });

  stages.push({ stage: 'validate (schema)', us: await time(n, batches, () => schemaProblems(validate, payload)) });

  let next = 0;
  stages.push({
    stage: 'de-dup (claim + commit)',
    us: await time(n, batches, () => {
      const id = ids[next++]!;
      const claim = store.claim(id, 60_000);
      if (claim.state === 'claimed') store.commit(id, claim.token);
    }),
  });

  stages.push({
    stage: 'route (delivery, handlers)',
    us: await time(n, batches, () => {
      const delivery = boardDelivery(payload, {
        request: req,
        verified: { by: undefined, timestamp: signature.timestamp },
        nowMs: Date.now(),
      });
      return dispatch({
        delivery,
        route,
        scope: { source: req, access: NODE_REQUEST, receivedAt: Date.now(), logger },
        secrets: [],
        deadlineMs: 8000,
      }).run;
    }),
  });

  // @opentelemetry/api is installed here and no provider is registered: what every delivery pays for the hook.
  const telemetry = new DeliveryTelemetry('board');
  stages.push({ stage: 'telemetry (OpenTelemetry api, no provider)', us: await time(n, batches, () => telemetry.start()) });

  stages.push({
    stage: 'log (one line)',
    us: await time(n, batches, (i) => {
      logger.info({ deliveryId: ids[i], kind: 'task.updated', outcome: 'handled', status: 200, durationMs: 0.1 }, 'delivery received');
    }),
  });

  const middleware = svcBoardWebhook(SVC_SECRET).on('task.updated', trivialHandler);
  const through = (listener: (req: IncomingMessage, res: ServerResponse) => void, delivery: SignedDelivery) =>
    new Promise<number>((resolve) => listener(fakeRequest(delivery, PATH), fakeResponse(resolve)));
  const viaMiddleware = (req2: IncomingMessage, res: ServerResponse) => middleware(req2, res, () => undefined);
  const floor = nodeFloor();
  const whole = await timeEach(n, batches, {
    svc: () => through(viaMiddleware, fresh[cursors.whole++ % fresh.length]!),
    floor: () => through(floor, fresh[cursors.wholeFloor++ % fresh.length]!),
    stream: () => nextReq('stream'),
  });
  const wholeUs = whole.svc - whole.stream;
  const floorWholeUs = whole.floor - whole.stream;

  let forged: StageReport['forged'];
  if (forgedPool.length > 0) {
    // A forged body must never reach JSON.parse: count the calls while forged requests run.
    const parse = JSON.parse;
    let parses = 0;
    JSON.parse = ((...args: Parameters<typeof JSON.parse>) => {
      parses++;
      return parse(...args);
    }) as typeof JSON.parse;
    let status = 0;
    try {
      const us = await time(n, batches, async () => {
        status = await through(viaMiddleware, forgedPool[cursors.forged++ % forgedPool.length]!);
      });
      forged = { us: us - whole.stream, status, parses };
    } finally {
      JSON.parse = parse;
    }
  }
  // The floor's own check, for the record that verifyAndParse agrees with the svc verifier.
  if (verifyAndParse(Object.fromEntries(Object.entries(one.headers).map(([k, v]) => [k.toLowerCase(), v])), body) === undefined) {
    throw new Error('bench: the floor refused a correctly signed delivery');
  }
  return { size, stages, wholeUs, floorWholeUs, forged };
}

serveRequests({
  measure: (message: Message) => measure(message.size as BodySize, message.iterations as number, message.batches as number),
});
