import { MISROUTE_LOG_INTERVAL_MS, MisrouteLog } from '../../../src/observe/misroute-log';

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

  it('forgets the oldest path first past 1,000 paths, and logs it again then', () => {
    const { log, warn } = misrouteLog();
    for (let i = 0; i <= 1000; i++) log.misrouted(`/p${i}`, ['/webhooks/board']);
    expect(warn).toHaveBeenCalledTimes(1001);
    log.misrouted('/p1000', ['/webhooks/board']); // still remembered
    expect(warn).toHaveBeenCalledTimes(1001);
    log.misrouted('/p0', ['/webhooks/board']); // forgotten: logged again
    expect(warn).toHaveBeenCalledTimes(1002);
  });
});
