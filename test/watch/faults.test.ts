import { SvcClientError } from '../../src/client';
import { watchWebhooks, type WatchClient } from '../../src/watch';
import { memoryLogger } from '../support/apps';
import type { StateTimeFormat } from '../../src/testing';
import type { Fault } from './emulated-webhooks';
import { harness, LEVEL, sleep, until, type Harness } from './harness';

const DAY_MS = 24 * 60 * 60 * 1000;

describe('watchWebhooks when svc misbehaves: a clear state and line, never a crash, never a false healthy', () => {
  let h: Harness;
  afterEach(() => h.close());

  async function firstStatus(fault: Fault, clientTimeoutMs = 1_000) {
    h = await harness({ boards: 1 }, clientTimeoutMs);
    const [board] = h.svc.boardIds as [string];
    h.svc.fault(board, fault);
    h.watch();
    await h.watcher!.checked();
    return h.changes[0]!.current;
  }

  describe('svc refuses the token', () => {
    it('401 (revoked) → unreachable `unauthorized`, an error line saying so, the token never shown', async () => {
      h = await harness({ boards: 2 });
      h.watch();
      await h.watcher!.checked();
      h.svc.revokeToken();
      await until(() => h.changes.filter((c) => c.current.state === 'unreachable').length === 2, 'both unreachable');
      expect(h.changes.slice(2).map((c) => [c.current.state, c.current.reason, c.current.httpStatus])).toEqual([
        ['unreachable', 'unauthorized', 401],
        ['unreachable', 'unauthorized', 401],
      ]);
      const line = h.lines().find((l) => l.reason === 'unauthorized')!;
      expect(line.level).toBe(LEVEL.error);
      expect(line.msg).toMatch(/state unknown: svc refused the watcher's token \(401: revoked or expired\?\)/);
      expect(h.logText()).not.toContain(h.svc.personToken);
    });

    it('403 → unreachable `forbidden`, at error', async () => {
      const status = await firstStatus({ status: 403 });
      expect(status).toMatchObject({ state: 'unreachable', reason: 'forbidden', httpStatus: 403 });
      expect(h.lines().find((l) => l.reason === 'forbidden')).toMatchObject({ level: LEVEL.error });
    });
  });

  describe("svc's API fails", () => {
    it.each([500, 502, 503])('%i → unreachable `svc_api_error` at warn, then back to healthy when svc answers', async (code) => {
      h = await harness({ boards: 1 });
      const [board] = h.svc.boardIds as [string];
      h.watch();
      await h.watcher!.checked();
      h.svc.fault(board, { status: code });
      await until(() => h.changes.length === 2, 'unreachable');
      expect(h.changes[1]!.current).toMatchObject({ state: 'unreachable', reason: 'svc_api_error', httpStatus: code });
      expect(h.changes[1]!.current.summary).toBe(`state unknown: svc answered ${code}`);
      expect(h.lines().find((l) => l.state === 'unreachable')).toMatchObject({ level: LEVEL.warn });
      await sleep(150);
      expect(h.changes).toHaveLength(2);
      h.svc.fault(board, undefined);
      await until(() => h.changes.length === 3, 'healthy');
      expect(h.path(board)).toEqual(['none→healthy', 'healthy→unreachable', 'unreachable→healthy']);
    });

    it('no answer within the client timeout → unreachable `timeout`', async () => {
      const status = await firstStatus({ kind: 'timeout' }, 150);
      expect(status).toMatchObject({ state: 'unreachable', reason: 'timeout' });
      expect(status.summary).toBe('state unknown: svc did not answer in time');
    });

    it('svc not listening → unreachable `network_error`', async () => {
      h = await harness({ boards: 1 });
      const [board] = h.svc.boardIds as [string];
      await h.svc.close();
      h.watch();
      await h.watcher!.checked();
      expect(h.watcher!.statuses()[0]).toMatchObject({ boardId: board, state: 'unreachable', reason: 'network_error' });
    });

    it.each<[string, Fault]>([
      ['malformed JSON', { kind: 'malformed-json' }],
      ['a JSON array', { kind: 'not-object' }],
      ['an empty body', { kind: 'empty' }],
      ['a JSON null', { kind: 'json-null' }],
    ])('%s → unreachable `invalid_response`, never healthy nor missing', async (_name, fault) => {
      const status = await firstStatus(fault);
      expect(status).toMatchObject({ state: 'unreachable', reason: 'invalid_response' });
    });
  });

  describe('a state that cannot be read', () => {
    it.each([['yes'], [1], [null], [undefined]])('`enabled` %p with no disabledAt → unreachable `malformed_state`', async (enabled) => {
      const status = await firstStatus({ fields: { enabled } });
      expect(status).toMatchObject({ state: 'unreachable', reason: 'malformed_state' });
    });

    it('`enabled` missing but disabledAt set → disabled', async () => {
      const status = await firstStatus({ fields: { enabled: null, disabledAt: '2026-11-20T08:00:00Z' } });
      expect(status).toMatchObject({ state: 'disabled' });
      expect(status.disabledAt).toEqual({ raw: '2026-11-20T08:00:00Z', ms: Date.parse('2026-11-20T08:00:00Z') });
    });

    it('a pausedReason that is not a text is paused all the same, shown as it came', async () => {
      const status = await firstStatus({ fields: { pausedReason: 3 } });
      expect(status).toMatchObject({ state: 'paused', pausedReason: '3' });
    });

    it('lastError that is an object, pending as a uint64 string', async () => {
      const status = await firstStatus({
        fields: { failingSince: new Date().toISOString(), lastError: { status: 500, body: 'oops\nline two' }, pending: '18446744073709551615' },
      });
      expect(status).toMatchObject({ state: 'failing', lastError: '{"status":500,"body":"oops\\nline two"}', pending: '18446744073709551615' });
    });

    it('a token in lastError or in the url never reaches a line', async () => {
      const token = `svc_bot_${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}_${'A'.repeat(43)}`;
      const status = await firstStatus({
        fields: { failingSince: new Date().toISOString(), lastError: `echoed ${token}`, url: 'https://hooks.example.com/in?token=abcdef0123456789' },
      });
      expect(status.url).toBe('https://hooks.example.com/in?…');
      expect(h.logText()).not.toContain('A'.repeat(43));
      expect(h.logText()).not.toContain('abcdef0123456789');
    });
  });

  describe('timestamps in the formats svc might use (the spec does not give one)', () => {
    // Whole seconds: epoch seconds and HTTP dates carry no milliseconds.
    const at = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
    it.each<StateTimeFormat>(['iso', 'epoch-seconds', 'epoch-ms', 'http-date', 'proto'])('%s: failingSince read, disablesAt a day later', async (format) => {
      h = await harness({ boards: 1 });
      const [board] = h.svc.boardIds as [string];
      h.svc.setTimeFormat(format);
      await h.svc.failDeliveries(board, { since: at });
      h.watch();
      await h.watcher!.checked();
      const status = h.changes[0]!.current;
      expect(status.state).toBe('failing');
      expect(status.failingSince!.ms).toBe(at);
      expect(status.disablesAt).toBe(at + DAY_MS);
      expect(status.summary).toMatch(/svc disables it in about 23 h/);
    });

    it('a format not read: still failing, the raw text shown, no disable time invented', async () => {
      h = await harness({ boards: 1 });
      const [board] = h.svc.boardIds as [string];
      await h.svc.failDeliveries(board);
      h.svc.fault(board, { fields: { failingSince: `sometime around ${h.svc.now()}` } });
      h.watch();
      await h.watcher!.checked();
      const status = h.changes[0]!.current;
      expect(status).toMatchObject({ state: 'failing', failingSince: { raw: expect.stringMatching(/^sometime around \d+$/), ms: undefined } });
      expect(status.disablesAt).toBeUndefined();
      expect(status.summary).toMatch(/failing since "sometime around \d+" \(a time format not read\): svc disables it a day after that/);
    });
  });

  describe('faults of the caller', () => {
    it('an onChange that throws is logged, and the watcher goes on', async () => {
      h = await harness({ boards: 2 });
      h.watch({
        onChange: () => {
          throw new Error('dashboard down');
        },
      });
      await h.watcher!.checked();
      await h.svc.failDeliveries(h.svc.boardIds[0]!);
      await until(() => h.changes.length === 3, 'the change after the throws');
      expect(h.lines().filter((l) => l.msg === 'onChange threw; the watcher goes on')).toHaveLength(3);
    });

    it('a board list function that throws or answers no list: a warn line, the boards listed before still watched', async () => {
      h = await harness({ boards: 2 });
      const [a] = h.svc.boardIds as [string];
      let answer: () => unknown = () => [a];
      h.watch({ boards: (() => answer()) as () => string[], boardsRefreshMs: 30 });
      await h.watcher!.checked();
      answer = () => {
        throw new Error('database down');
      };
      await until(
        () => h.lines().some((l) => /the board list could not be read \(database down\); still watching the 1 boards/.test(l.msg)),
        'the list failure',
      );
      answer = () => 'not a list';
      await until(() => h.lines().some((l) => /must answer an array/.test(l.msg)), 'the wrong answer');
      expect(h.watcher!.statuses().map((s) => s.webhook === 'board' && s.boardId)).toEqual([a]);
    });

    it('ids that are not board ids are skipped with one line, duplicates watched once', async () => {
      h = await harness({ boards: 1 });
      const [a] = h.svc.boardIds as [string];
      h.watch({ boards: () => [a, a, '', ' padded ', '..', 'x'.repeat(201), 42 as unknown as string] });
      await h.watcher!.checked();
      expect(h.watcher!.statuses()).toHaveLength(1);
      expect(h.lines().find((l) => /5 entries that are not board ids/.test(l.msg))).toMatchObject({ level: LEVEL.warn, skipped: 5 });
    });

    it('a client that throws something that is not an SvcClientError → unreachable, never a crash', async () => {
      const log = memoryLogger();
      const seen: string[] = [];
      const client = {
        getBoardWebhook: () => Promise.reject('a string, not an error'),
        getBotWebhook: () => {
          throw new SvcClientError('invalid_token', 'the bot webhook routes need a bot token');
        },
      } as unknown as WatchClient;
      const watcher = watchWebhooks({
        client,
        boards: ['b1'],
        bot: true,
        intervalMs: 40,
        logger: log.logger,
        onChange: (c) => void seen.push(`${c.current.webhook}:${c.current.state}:${c.current.reason}`),
      });
      await watcher.checked();
      await watcher.close();
      expect(seen.sort()).toEqual(['board:unreachable:error', 'bot:unreachable:invalid_token']);
      h = await harness();
    });
  });
});
