/** The receiver's unit-test harness: a framework-free request, its access, a recording store and a receiver around them. */
import type { IncomingMessage } from 'node:http';
import pino from 'pino';
import type { ClaimResult, DeliveryStore } from '../../../src/dedup/delivery-store';
import { memoryStore } from '../../../src/dedup/memory-store';
import type { BoardWebhookOptions } from '../../../src/webhooks/webhook-settings';
import type { DeliveryRecord, ErrorHandler } from '../../../src/route/handler-types';
import { settings } from '../../../src/webhooks/webhook-settings';
import type { BoardDelivery } from '../../../src/internal/delivery/delivery';
import { DeliveryReport } from '../../../src/observe/delivery-report';
import type { Settings } from '../../../src/receive/settings';
import { HandlerRegistry, boardRoute } from '../../../src/route/delivery-route';
import { boardDelivery } from '../../../src/validate/board-delivery';
import { boardVerifier } from '../../../src/verify/verify-signature';
import { Receiver, type Outcome } from '../../../src/receive/receiver';
import type { Handoff } from '../../../src/inbox/accepted-delivery';
import type { RequestAccess } from '../../../src/internal/request/request-access';
import type { BoardContext, BoardHandler } from '../../../src/route/handler-types';
import { boardEvent } from '../../../src/testing/example-events';
import { signBoardEvent } from '../../../src/testing/sign-delivery';

export const secret = 'receiver-secret-0123456789abcdef';
export const NOW = 1_772_366_400_000;

/** A framework-free request: headers, path, the body's bytes and whether they were all read. */
export interface FakeRequest {
  readonly headers: Record<string, string>;
  readonly url: string;
  readonly body: Buffer;
  complete: boolean;
  readonly node: IncomingMessage;
}

export function accessOf(read: (req: FakeRequest, limit: number) => Promise<Buffer> = async (req) => req.body) {
  const access = {
    facts: jest.fn((req: FakeRequest) => ({ headers: req.headers, url: req.url })),
    url: jest.fn((req: FakeRequest) => `${req.url}?q=1`),
    readBody: jest.fn(async (req: FakeRequest, limit: number) => {
      const body = await read(req, limit);
      req.complete = true;
      return body;
    }),
    complete: jest.fn((req: FakeRequest) => req.complete),
    nodeRequest: jest.fn((req: FakeRequest) => req.node),
    fetchRequest: jest.fn((req: FakeRequest) => new Request(`http://localhost${req.url}`, { method: 'POST' })),
  };
  return access satisfies RequestAccess<FakeRequest>;
}

export function requestOf(event: object | string = boardEvent('task.created'), change: Record<string, string | undefined> = {}, key = secret): FakeRequest {
  const signed = signBoardEvent(event, { secret: key, timestamp: NOW / 1000 });
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers)) headers[name.toLowerCase()] = value;
  for (const [name, value] of Object.entries(change)) {
    if (value === undefined) delete headers[name];
    else headers[name] = value;
  }
  return { headers, url: '/webhooks/board', body: Buffer.from(signed.body), complete: false, node: { marker: 'node request' } as unknown as IncomingMessage };
}

/** A store that does what the memory store does, each call recorded and replaceable. */
export function recordingStore() {
  const inner = memoryStore();
  return {
    claim: jest.fn((id: string, leaseMs: number): ClaimResult | Promise<ClaimResult> => inner.claim(id, leaseMs)),
    commit: jest.fn((id: string, token: string): void | Promise<void> => inner.commit(id, token)),
    release: jest.fn((id: string, token: string): void | Promise<void> => inner.release(id, token)),
    extend: jest.fn((id: string, token: string, leaseMs: number): void | Promise<void> => inner.extend(id, token, leaseMs)),
  } satisfies DeliveryStore;
}

/** The board webhook's receiver over `config`, as svcBoardWebhook assembles it. */
export function boardReceiver(
  config: Settings,
  parts: Omit<Setup, 'options'> & { byType?: HandlerRegistry<BoardHandler<never>>; any?: BoardHandler<never>[] } = {},
) {
  const protocol = {
    webhook: 'board' as const,
    schema: 'board' as const,
    verifier: boardVerifier({ secrets: config.secrets, pattern: config.pattern, toleranceSeconds: config.toleranceSeconds }),
    check: boardDelivery,
    route: boardRoute({ byType: parts.byType ?? new HandlerRegistry(), any: parts.any ?? [] }),
  };
  const report = new DeliveryReport({
    webhook: 'board',
    logger: config.logger,
    lineLogger: config.lineLogger,
    listeners: parts.listeners ?? [],
    errorHandlers: parts.errorHandlers ?? [],
    now: config.now,
  });
  return new Receiver({ protocol, settings: config, report, handoff: parts.handoff });
}

export interface Setup {
  options?: Partial<BoardWebhookOptions>;
  handoff?: Handoff<BoardDelivery>;
  listeners?: Array<(record: DeliveryRecord) => void>;
  errorHandlers?: ErrorHandler[];
}

export function setup({ options = {}, handoff, listeners = [], errorHandlers = [] }: Setup = {}) {
  const chunks: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (s: string) => void chunks.push(s) });
  const store = recordingStore();
  const config = settings({ secret, logger, now: () => NOW, store, ...options }, 'board');
  const byType = new HandlerRegistry<BoardHandler<never>>();
  const any: BoardHandler<never>[] = [];
  const receiver = boardReceiver(config, { handoff, listeners, errorHandlers, byType, any });
  const access = accessOf();
  return {
    receiver,
    store,
    access,
    on(type: string, handler: (event: any, ctx: BoardContext<any>) => unknown) {
      byType.add(type, handler as BoardHandler<never>, () => undefined);
    },
    any(handler: (event: any, ctx: BoardContext<any>) => unknown) {
      any.push(handler as BoardHandler<never>);
    },
    send: (req: FakeRequest = requestOf(), through: RequestAccess<FakeRequest> = access) => receiver.receive(req, through),
    lines: (): Array<Record<string, any>> => chunks.map((c) => JSON.parse(c)),
  };
}

export function codeOf(outcome: Outcome): string | undefined {
  return (JSON.parse(outcome.body) as { code?: string }).code;
}

/** Lets every queued promise callback run (observers are told after the answer). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

export { deferred } from '../../support/deferred';

/**
 * The commit after a 200 fails once, asynchronously: it is retried in the background 50 ms later,
 * and close() resolves only after the retry.
 */
export async function commitRetriedBeforeClose({ send, store, receiver }: ReturnType<typeof setup>): Promise<void> {
  jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
  store.commit.mockRejectedValueOnce(new Error('store blinked'));
  expect((await send()).status).toBe(200);
  let closed = false;
  void receiver.close().then(() => (closed = true));
  await settle();
  expect(closed).toBe(false);
  await jest.advanceTimersByTimeAsync(50);
  await settle();
  expect([store.commit.mock.calls.length, closed]).toEqual([2, true]);
}
