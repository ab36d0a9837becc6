import { memoryLogger } from '../support/apps';
import { ChangeLog, MAX_LINES_PER_WINDOW } from '../../src/watch/change-log';
import type { WebhookStatus } from '../../src/watch/watch-types';
import { scrubbedLogger } from '../../src/internal/logging/webhook-loggers';

function status(boardId: string, state: WebhookStatus['state'], reason?: string): WebhookStatus {
  return { webhook: 'board', boardId, state, since: 0, checkedAt: 0, summary: `${state}!`, ...(reason === undefined ? {} : { reason }) } as WebhookStatus;
}

describe('ChangeLog: one line per change, bounded when svc fails for every webhook at once', () => {
  it(`logs ${MAX_LINES_PER_WINDOW} lines of one state per window, then one line counting the rest`, async () => {
    const log = memoryLogger();
    const changes = new ChangeLog(scrubbedLogger(log.logger, {}, []), 100);
    for (let i = 0; i < 500; i++) changes.change({ previous: status(`b${i}`, 'healthy'), current: status(`b${i}`, 'unreachable', 'timeout') });
    changes.change({ previous: status('x', 'healthy'), current: status('x', 'failing') });
    expect(log.lines.filter((l) => l.state === 'unreachable')).toHaveLength(MAX_LINES_PER_WINDOW);
    expect(log.lines.filter((l) => l.state === 'failing')).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 150));
    const summary = log.lines.find((l) => l.held !== undefined)!;
    expect(summary).toMatchObject({ level: 40, held: 500 - MAX_LINES_PER_WINDOW });
    expect(summary.msg).toMatch(/^and 480 more webhooks became unreachable within 100 ms/);
    // A new window logs again.
    changes.change({ previous: status('y', 'healthy'), current: status('y', 'unreachable', 'timeout') });
    expect(log.lines.filter((l) => l.state === 'unreachable')).toHaveLength(MAX_LINES_PER_WINDOW + 1);
    changes.close();
  });

  it('close() writes the counts still held', () => {
    const log = memoryLogger();
    const changes = new ChangeLog(scrubbedLogger(log.logger, {}, []), 60_000);
    for (let i = 0; i < MAX_LINES_PER_WINDOW + 3; i++) changes.change({ previous: undefined, current: status(`b${i}`, 'disabled') });
    changes.close();
    expect(log.lines.at(-1)).toMatchObject({ level: 50, held: 3 });
  });

  it('a first healthy status is not logged; back to healthy is, at info', () => {
    const log = memoryLogger();
    const changes = new ChangeLog(scrubbedLogger(log.logger, {}, []), 60_000);
    changes.change({ previous: undefined, current: status('a', 'healthy') });
    changes.change({ previous: status('b', 'paused'), current: status('b', 'healthy') });
    changes.close();
    expect(log.lines.map((l) => [l.level, l.msg])).toEqual([[30, 'board webhook of board b: back to healthy (was paused)']]);
  });
});
