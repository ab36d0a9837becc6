import { keySegment } from '../internal/connections/redis-key';
import type { SequenceGap } from '../internal/delivery/delivery';
import type { WebhookLogger } from '../internal/logging/logger';

/**
 * Board order on top of BullMQ (its open-source edition has no job groups): each ordered event
 * stays an ordinary job; before its handlers run, one atomic script decides whether it is the
 * board's turn. Per board, Redis keeps the last sequence handed over (`last`), the ordered events
 * seen but not yet handled (`pending`, sequence -> job id), the job being handled (`lock`) and the
 * sequences of unordered kinds already taken up out of band (`passed`). An event runs when no other
 * event of its board runs and it is the next sequence (or the lowest one present once `gapWaitMs`
 * has passed since its first turn, reported as a gap); otherwise its job goes back to BullMQ's
 * delayed set, marked as waiting for its turn, and is promoted when its predecessor ends.
 * Everything lives in Redis, so a worker crash loses neither the order nor an event: the crashed
 * job comes back through BullMQ's stalled-job recovery and finds its own lock.
 */

// The board's first pending event (by sequence) that waits for its turn. A job that failed and waits
// for its retry is passed over, not woken early: that would spend its retries; an event behind it
// that may run (a late event's successors do not wait for it) is still woken. ARGV[4] of FINISH and
// ARGV[3] of PASS: the job key prefix.
const NEXT = `
local function waiting(prefix)
  for _, next in ipairs(redis.call('ZRANGE', KEYS[2], 0, 99)) do
    if redis.call('HEXISTS', prefix .. next, 'svcTurnWait') == 1 then return next end
  end
  return false
end
`;

// KEYS: last, pending, lock, passed. ARGV: jobId, sequence, now, gapWaitMs, ttlMs, jobKeyPrefix, probe, lastTtlMs.
// Answers {1, gapFrom} (run; gapFrom -1 when no gap), {0, waitMs} (0: until woken), {0, waitMs,
// gapFrom} (it starts waiting for the missing numbers from gapFrom) or {2, 0}
// (handled already: do not run it again).
const START = `
local id, seq, now, gapWait, ttl, jobs, probe = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5], ARGV[6], ARGV[7] == '1'
local job = jobs .. id
-- A lock or pending entry whose job is gone, dead (a worker crashed and the job then failed for
-- stalling) or finished without recording its end (Redis failed just then) must not block its board.
local function gone(other)
  return redis.call('EXISTS', jobs .. other) == 0 or redis.call('ZSCORE', jobs .. 'failed', other) ~= false
    or redis.call('ZSCORE', jobs .. 'completed', other) ~= false
end
-- Not its turn: marked as waiting for it, so that the event before it wakes it when it ends.
local function wait(ms)
  if not probe then redis.call('HSET', job, 'svcTurnWait', 1) end
  return {0, ms}
end
-- Handed over already: its worker recorded the board's progress and died before BullMQ marked the job processed.
if redis.call('HEXISTS', job, 'svcHandled') == 1 then
  if not probe then redis.call('ZREM', KEYS[2], id) end
  return {2, 0}
end
if not probe then redis.call('ZADD', KEYS[2], seq, id) end
-- The wait for a missing predecessor counts from the event's first turn, not from its arrival:
-- time spent in a backlog of the queue, before its predecessor could be seen, is not waiting.
local first = redis.call('HGET', job, 'svcFirstTurn')
if first then first = tonumber(first) else
  first = now
  if not probe then redis.call('HSET', job, 'svcFirstTurn', now) end
end
local holder = redis.call('GET', KEYS[3])
if holder and holder ~= id and not gone(holder) then return wait(0) end
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
while true do
  while redis.call('ZSCORE', KEYS[4], tostring(last + 1)) do last = last + 1 end
  local lowest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  if lowest[1] == nil or lowest[1] == id or not gone(lowest[1]) then break end
  redis.call('ZREM', KEYS[2], lowest[1])
  if tonumber(lowest[2]) == last + 1 then last = last + 1 end
end
if probe then
  if seq <= last + 1 then return {1, -1} end
else
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', last)
  redis.call('SET', KEYS[1], last, 'PX', ARGV[8])
  redis.call('PEXPIRE', KEYS[2], ttl)
  redis.call('PEXPIRE', KEYS[4], ttl)
end
local gapFrom = -1
if seq > last + 1 then
  local lowest = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
  if lowest ~= id then return wait(0) end
  if now - first < gapWait then
    -- The first time it waits for a gap, the missing numbers come back, to be logged once.
    local starts = (not probe) and redis.call('HSETNX', job, 'svcGapWait', now) == 1
    local answer = wait(gapWait - (now - first))
    if starts then answer[3] = last + 1 end
    return answer
  end
  gapFrom = last + 1
end
if not probe then
  redis.call('SET', KEYS[3], id, 'PX', ttl)
  redis.call('HDEL', job, 'svcTurnWait')
end
return {1, gapFrom}
`;

// KEYS: last, pending, lock. ARGV: jobId, sequence, lastTtlMs, jobKeyPrefix, handled ('1', or '0' for a
// dead letter). The event was handled (or given up on): the board moves past it, and a handled event
// is marked on its job so that a re-run after a crash right now does not hand it over again.
// Answers the job id to wake: the board's lowest pending event, if it waits for its turn.
const FINISH = `${NEXT}
if ARGV[5] == '1' and redis.call('EXISTS', ARGV[4] .. ARGV[1]) == 1 then redis.call('HSET', ARGV[4] .. ARGV[1], 'svcHandled', 1) end
if redis.call('GET', KEYS[3]) == ARGV[1] then redis.call('DEL', KEYS[3]) end
redis.call('ZREM', KEYS[2], ARGV[1])
local seq = tonumber(ARGV[2])
if seq > tonumber(redis.call('GET', KEYS[1]) or '0') then redis.call('SET', KEYS[1], seq, 'PX', ARGV[3]) end
return waiting(ARGV[4])
`;

// KEYS: lock. ARGV: jobId. A failed attempt that will be retried keeps its place but lets go of the board.
const RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

// KEYS: last, pending, passed. ARGV: sequence, ttlMs, jobKeyPrefix. An event of an unordered kind was
// taken up: ordered events after it need not wait for its sequence. Answers the job id to wake.
const PASS = `${NEXT}
local seq = tonumber(ARGV[1])
if seq > tonumber(redis.call('GET', KEYS[1]) or '0') then
  redis.call('ZADD', KEYS[3], seq, ARGV[1])
  redis.call('PEXPIRE', KEYS[3], ARGV[2])
end
return waiting(ARGV[3])
`;

/**
 * How long a board's last handed-over sequence is kept after its last event: a board quiet for
 * longer is taken for a new one (its next event waits for the numbers from 1, and reports them as a gap).
 */
export const BOARD_PLACE_KEPT_MS = 365 * 24 * 60 * 60 * 1000;

/** The part of an ioredis client the ordering uses. */
export interface ScriptRunner {
  eval(script: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>;
}

export type Turn =
  | { readonly run: true; readonly gap?: SequenceGap }
  /** `missing`: the numbers it starts waiting for now (only the first time it waits for them). */
  | { readonly run: false; readonly waitMs: number; readonly missing?: SequenceGap }
  /** Handed over already (its worker died between recording it and BullMQ marking the job processed). */
  | { readonly run: false; readonly handled: true };

export class BoardOrder {
  /**
   * `keyPrefix`: where this queue's keys live (`<prefix>:<queue>:`), BullMQ's job hashes included.
   * `ttlMs`: how long a quiet board's state is kept.
   */
  constructor(
    private readonly redis: ScriptRunner,
    private readonly keyPrefix: string,
    private readonly gapWaitMs: number,
    private readonly ttlMs: number,
  ) {}

  /** The last handed-over sequence outlives the rest of a board's state: see BOARD_PLACE_KEPT_MS. */
  private get lastTtlMs(): number {
    return Math.max(this.ttlMs, BOARD_PLACE_KEPT_MS);
  }

  /** Takes the board for this event when it is its turn. */
  start(board: string, jobId: string, sequence: number, now: number): Promise<Turn> {
    return this.turn({ board, jobId, sequence }, now, false);
  }

  /** Whether it is this event's turn now, taking nothing. */
  probe(board: string, jobId: string, sequence: number, now: number): Promise<Turn> {
    return this.turn({ board, jobId, sequence }, now, true);
  }

  private async turn({ board, jobId, sequence }: { board: string; jobId: string; sequence: number }, now: number, probe: boolean): Promise<Turn> {
    const k = this.keys(board);
    const [run, value, gapFrom] = (await this.redis.eval(
      START,
      4,
      k.last,
      k.pending,
      k.lock,
      k.passed,
      jobId,
      sequence,
      now,
      this.gapWaitMs,
      this.ttlMs,
      this.keyPrefix,
      probe ? '1' : '0',
      this.lastTtlMs,
    )) as [number, number, number?];
    if (run === 2) return { run: false, handled: true };
    if (run !== 1) return gapFrom === undefined ? { run: false, waitMs: value } : { run: false, waitMs: value, missing: { from: gapFrom, to: sequence - 1 } };
    return value === -1 ? { run: true } : { run: true, gap: { from: value, to: sequence - 1 } };
  }

  /** The event was handled (`handled`), or given up on (a dead letter): the board moves on. Answers the job to wake. */
  async finish(board: string, jobId: string, sequence: number, handled: boolean): Promise<string | null> {
    const k = this.keys(board);
    return (await this.redis.eval(FINISH, 3, k.last, k.pending, k.lock, jobId, sequence, this.lastTtlMs, this.keyPrefix, handled ? '1' : '0')) as string | null;
  }

  /** A failed attempt that will be retried lets other work see the board free (its successors still wait for it). */
  async release(board: string, jobId: string): Promise<void> {
    await this.redis.eval(RELEASE, 1, this.keys(board).lock, jobId);
  }

  /** An event of an unordered kind was taken up: ordered events after it do not wait for it. */
  async pass(board: string, sequence: number): Promise<string | null> {
    const k = this.keys(board);
    return (await this.redis.eval(PASS, 3, k.last, k.pending, k.passed, sequence, this.ttlMs, this.keyPrefix)) as string | null;
  }

  /**
   * A board's keys: after the queue's prefix (BullMQ's keys there are fixed names and job ids, which
   * begin with `d-`), the marker `order:`, the board id as a key segment (so a board id cannot end
   * one key early and name another), and which of the four it is. UUIDs are their own segment.
   */
  private keys(board: string) {
    const base = `${this.keyPrefix}order:${keySegment(board)}:`;
    return { last: `${base}last`, pending: `${base}pending`, lock: `${base}lock`, passed: `${base}passed` };
  }
}

/**
 * The line an ordered event writes when it starts waiting for numbers that have not arrived: without
 * it a worker waits `gapWaitMs` in silence (the CLI's example events start at sequence 211).
 */
export function logGapWait(
  logger: WebhookLogger,
  data: { readonly board?: string; readonly sequence?: number; readonly deliveryId: string },
  turn: { readonly waitMs: number; readonly missing: SequenceGap },
): void {
  const { from, to } = turn.missing;
  // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: the text reaches only the log line's message (test/mutation/EQUIVALENT.inbox-rest.md)
  const numbers = from === to ? `sequence ${from}` : `sequences ${from}–${to}`;
  logger.info(
    { board: data.board, deliveryId: data.deliveryId, sequence: data.sequence, missing: turn.missing, waitMs: turn.waitMs },
    `ordered event ${data.sequence} of board ${data.board} waits up to ${Math.ceil(turn.waitMs / 1000)} s (gapWaitMs) for ${numbers}, not arrived yet; then it runs with ctx.gap`,
  );
}
