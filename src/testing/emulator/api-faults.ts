import type { ServerResponse } from 'node:http';
import { FakeSvcError } from './emulator-error';
import { sendJson } from './http-answer';

/** What svc answers instead of the route's answer. */
export type ApiFaultAnswer =
  /** This status, with a JSON body (default `{ code: 'fault', message }`) and Retry-After if given. */
  | { status: number; retryAfter?: string; body?: unknown }
  /** No answer at all (the client's timeout decides), or a 200 whose body is not the state. */
  | { kind: 'no-answer' | 'malformed-json' | 'not-object' | 'json-null' | 'empty' }
  /** The state, with these fields over it (a GET's answer as a newer or odder svc might shape it). */
  | { fields: Record<string, unknown> };

/**
 * A fault of svc's API, for testing a client's handling of what the spec does not promise: an
 * outage, a rate limit, an answer that cannot be read. It applies to the webhook routes of `on`
 * (a board, the bot webhook, or all; default all), to `method` (default every method, `ping` for
 * the ping route), for `times` requests (default until removed).
 */
export type ApiFault = ApiFaultAnswer & {
  on?: { boardId: string } | 'bot' | 'all';
  method?: 'GET' | 'PUT' | 'DELETE' | 'ping';
  times?: number;
};

/** Which route a request is on: the board (or the bot) and the method (`ping` for the ping route). */
export interface FaultTarget {
  readonly boardId?: string;
  readonly method: string;
}

function checkFault(fault: ApiFault): void {
  if (typeof fault !== 'object' || fault === null) throw new FakeSvcError('invalid_input', 'a fault is an object');
  const answers = ['status' in fault, 'kind' in fault, 'fields' in fault].filter(Boolean).length;
  if (answers !== 1) throw new FakeSvcError('invalid_input', 'a fault has one of status, kind or fields');
  if ('status' in fault && !(Number.isInteger(fault.status) && fault.status >= 100 && fault.status <= 599))
    throw new FakeSvcError('invalid_input', 'a fault status is 100 to 599');
  if (fault.times !== undefined && !(Number.isSafeInteger(fault.times) && fault.times > 0))
    throw new FakeSvcError('invalid_input', 'times is a whole number above 0');
}

/** The faults in force, first added first matched. */
export class ApiFaults {
  readonly #faults: Array<ApiFault & { left: number }> = [];
  /** Answers held open by `no-answer`, ended when the emulator closes. */
  readonly held = new Set<ServerResponse>();

  /** Adds `fault`; the function returned removes it. */
  add(fault: ApiFault): () => void {
    checkFault(fault);
    const entry = { ...fault, left: fault.times ?? Number.POSITIVE_INFINITY };
    this.#faults.push(entry);
    return () => {
      const at = this.#faults.indexOf(entry);
      if (at >= 0) this.#faults.splice(at, 1);
    };
  }

  /** The fault for this request, counted down, if one applies. */
  take(target: FaultTarget): ApiFault | undefined {
    const fault = this.#faults.find((f) => {
      if (f.method !== undefined && f.method !== target.method) return false;
      const on = f.on ?? 'all';
      if (on === 'all') return true;
      return on === 'bot' ? target.boardId === undefined : target.boardId === on.boardId;
    });
    if (fault === undefined) return undefined;
    fault.left -= 1;
    if (fault.left <= 0) this.#faults.splice(this.#faults.indexOf(fault), 1);
    return fault;
  }

  /** Answers `fault`; `state` is the webhook's state, for a `fields` fault, and `wrap` shapes it as the route would. */
  answer(res: ServerResponse, fault: ApiFault, state: unknown, wrap: (state: object) => object = (x) => x): void {
    if ('status' in fault) {
      const body = fault.body ?? { code: 'fault', message: `svc answered ${fault.status}` };
      sendJson(res, fault.status, body, fault.retryAfter === undefined ? {} : { 'retry-after': fault.retryAfter });
    } else if ('fields' in fault) {
      sendJson(res, 200, wrap({ ...(typeof state === 'object' && state !== null ? state : {}), ...fault.fields }));
    } else if (fault.kind === 'no-answer') {
      this.held.add(res);
      res.on('close', () => this.held.delete(res));
    } else {
      const text = { 'malformed-json': '{"enabled": tru', 'not-object': '[1, 2, 3]', 'json-null': 'null', empty: '' }[fault.kind];
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(text);
    }
  }
}
