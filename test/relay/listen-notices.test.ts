import { Notices } from '../../src/cli/listen-lines';

/** The listener's notices with a clock the test moves: once, then at most once a minute per condition. */

test('a condition is said once, again only after a minute with how often it recurred, and once when it is over', () => {
  const lines: string[] = [];
  let now = 0;
  const notices = new Notices(
    (line) => lines.push(line),
    60_000,
    () => now,
  );
  for (; now < 60_000; now += 2000) notices.notice('receiver', 'the local receiver does not answer');
  notices.notice('relay', 'cannot reach the relay');
  expect(lines).toEqual(['the local receiver does not answer', 'cannot reach the relay']);
  notices.notice('receiver', 'the local receiver does not answer');
  expect(lines[2]).toBe('the local receiver does not answer (29 more times since the last notice)');
  notices.recovered('receiver', 'the local receiver answers again');
  notices.recovered('receiver', 'the local receiver answers again');
  expect(lines.slice(3)).toEqual(['the local receiver answers again']);
});
