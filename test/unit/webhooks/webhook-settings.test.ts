/**
 * The warning a webhook logs at setup where de-duplication with the default store holds per isolate
 * only. The runtimes are simulated in this process by what the code reads of them: no `process`
 * (Vercel's Edge runtime, Workers without nodejs_compat), Workers' user agent, a Node without
 * `getBuiltinModule` (before 20.16). test/runtimes/ checks the same in workerd and edge-runtime.
 */
import pino from 'pino';
import { memoryStore, svcBoardWebhook, svcBotWebhook, type DeliveryStore } from '../../../src/web';
import { boardEvent, signBoardEvent } from '../../../src/testing';

const secret = 'settings-secret-0123456789abcdef';

function logged() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  const warnings = () => lines.filter((line) => line.dedup === 'per_isolate');
  return { logger, warnings };
}

/** Runs `make` with a global replaced (or removed, when `value` is undefined), then puts it back. */
function withGlobal<T>(target: object, name: string, value: unknown, make: () => T): T {
  const saved = Object.getOwnPropertyDescriptor(target, name);
  Object.defineProperty(target, name, { value, configurable: true, writable: true });
  try {
    return make();
  } finally {
    if (saved === undefined) delete (target as Record<string, unknown>)[name];
    else Object.defineProperty(target, name, saved);
  }
}

/** As on Vercel's Edge runtime or Workers without nodejs_compat: no process, so no Node module either. */
const withoutNode = <T>(make: () => T): T => withGlobal(globalThis, 'process', undefined, make);
/** As on Workers with nodejs_compat: a process and Node's modules, and Workers' user agent. */
const inWorkers = <T>(make: () => T): T => withGlobal(globalThis, 'navigator', { userAgent: 'Cloudflare-Workers' }, make);

describe('settings: the de-dup store a webhook gets', () => {
  describe('where each isolate has its own memory', () => {
    it.each([
      ['without Node (Vercel Edge, Workers without nodejs_compat)', withoutNode],
      ['on Workers with nodejs_compat', inWorkers],
    ])('%s: the default memory store logs one warning at setup, naming the option', (_where, runtime) => {
      const { logger, warnings } = logged();
      runtime(() => svcBoardWebhook({ secret, logger }));
      expect(warnings()).toEqual([expect.objectContaining({ level: 40, webhook: 'board', store: 'memory', dedup: 'per_isolate', option: 'store' })]);
    });

    it('warns for a bot webhook too', () => {
      const { logger, warnings } = logged();
      withoutNode(() => svcBotWebhook({ secret, logger }));
      expect(warnings()).toEqual([expect.objectContaining({ webhook: 'bot', dedup: 'per_isolate' })]);
    });

    it('warns at setup only, never per delivery', async () => {
      const { logger, warnings } = logged();
      const board = withoutNode(() => svcBoardWebhook({ secret, logger }).onAny(() => undefined));
      const signed = signBoardEvent(boardEvent('task.created'), { secret });
      for (let i = 0; i < 2; i++) expect((await board.receive({ body: signed.body, headers: signed.headers })).status).toBe(200);
      expect(warnings()).toHaveLength(1);
    });

    it.each([
      ['store: memoryStore()', () => memoryStore()],
      [
        'a store of its own',
        () => ({ claim: () => ({ state: 'claimed', token: 't' }), commit: () => undefined, release: () => undefined }) as unknown as DeliveryStore,
      ],
    ])('says nothing when the user passes %s', (_what, store) => {
      const { logger, warnings } = logged();
      withoutNode(() => svcBoardWebhook({ secret, logger, store: store() }));
      inWorkers(() => svcBoardWebhook({ secret, logger, store: store() }));
      expect(warnings()).toEqual([]);
    });
  });

  describe('in a Node process', () => {
    it('says nothing: the memory store is the process’s, as the docs say', () => {
      const { logger, warnings } = logged();
      svcBoardWebhook({ secret, logger });
      svcBotWebhook({ secret, logger });
      expect(warnings()).toEqual([]);
    });

    it('says nothing on Node before 20.16 either, which has no getBuiltinModule', () => {
      const { logger, warnings } = logged();
      withGlobal(process, 'getBuiltinModule', undefined, () => svcBoardWebhook({ secret, logger }));
      expect(warnings()).toEqual([]);
    });
  });
});
