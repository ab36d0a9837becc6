import { MAX_MISROUTE_LINES, MISROUTE_LOG_INTERVAL_MS, MisrouteLog } from '../../../src/observe/misroute-log';

function misrouteLog() {
  const warn = jest.fn();
  let now = 1_000_000;
  const log = new MisrouteLog({ warn } as never, () => now);
  return { log, warn, advance: (ms: number) => (now += ms) };
}

describe('the line for a signed delivery no webhook path answers', () => {
  it('names the path it came to and the paths the webhooks answer, as a warning', () => {
    const { log, warn } = misrouteLog();
    log.misrouted('/wrong', ['/webhooks/board']);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0][0]).toEqual({ path: '/wrong', answers: ['/webhooks/board'], option: 'path' });
  });

  it('is logged at most once per path per interval', () => {
    const { log, warn, advance } = misrouteLog();
    log.misrouted('/wrong', ['/webhooks/board']);
    advance(MISROUTE_LOG_INTERVAL_MS - 1);
    log.misrouted('/wrong', ['/webhooks/board']);
    expect(warn).toHaveBeenCalledTimes(1);
    advance(1);
    log.misrouted('/wrong', ['/webhooks/board']);
    expect(warn).toHaveBeenCalledTimes(2);
  });

  it('is logged for each path on its own', () => {
    const { log, warn } = misrouteLog();
    log.misrouted('/a', ['/webhooks/board']);
    log.misrouted('/b', ['/webhooks/board']);
    expect(warn).toHaveBeenCalledTimes(2);
    // Remembering /b forgot nothing: /a is still within its interval.
    log.misrouted('/a', ['/webhooks/board']);
    expect(warn).toHaveBeenCalledTimes(2);
  });

  it('writes at most MAX_MISROUTE_LINES lines per interval over all paths: 600 paths are not 600 lines', () => {
    const { log, warn } = misrouteLog();
    for (let i = 0; i < 600; i++) log.misrouted(`/scan/${i}`, ['/webhooks/board']);
    expect(warn).toHaveBeenCalledTimes(MAX_MISROUTE_LINES);
    expect(warn.mock.calls.map((call) => call[0].path)).toEqual(Array.from({ length: MAX_MISROUTE_LINES }, (_, i) => `/scan/${i}`));
  });

  it('counts the requests it did not log in the next line it writes', () => {
    const { log, warn, advance } = misrouteLog();
    for (let i = 0; i < 600; i++) log.misrouted(`/scan/${i}`, ['/webhooks/board']);
    log.misrouted('/scan/0', ['/webhooks/board']); // a repeat within its interval is counted too
    advance(MISROUTE_LOG_INTERVAL_MS);
    log.misrouted('/wrong', ['/webhooks/board']);
    expect(warn).toHaveBeenCalledTimes(MAX_MISROUTE_LINES + 1);
    expect(warn.mock.calls.at(-1)![0]).toEqual({ path: '/wrong', answers: ['/webhooks/board'], option: 'path', dropped: 600 - MAX_MISROUTE_LINES + 1 });
    // Counted once: the line after carries no count.
    log.misrouted('/other', ['/webhooks/board']);
    expect(warn.mock.calls.at(-1)![0]).not.toHaveProperty('dropped');
  });
});

describe('the line for where a webhook answers, once Express told its mount', () => {
  function mountLog() {
    const info = jest.fn();
    return { log: new MisrouteLog({ info } as never, () => 0), info };
  }

  it('names the full path and the mount, `/` for a webhook mounted at the root', () => {
    const { log, info } = mountLog();
    log.mounted('/api/webhooks/board', '/api');
    log.mounted('/webhooks/bot', '');
    expect(info.mock.calls.map((call) => call[0])).toEqual([
      { path: '/api/webhooks/board', mountedAt: '/api' },
      { path: '/webhooks/bot', mountedAt: '/' },
    ]);
  });
});
