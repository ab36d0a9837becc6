import { svcBoardWebhook, svcBotWebhook, boardEventTypes, botEventKinds } from '../../src';
import { schemaProblems, validatorFor } from '../../src/validate/delivery-checks';
import { appWith, expressVersions, silentLogger } from '../support/apps';
import { post } from '../support/post';
import { BOARD_SECRET, BOT_SECRET, fixture, fixtureNames, signBoard, signBot } from '../support/sign';

describe('example fixtures', () => {
  it('cover every board event type and every bot event kind the spec names', () => {
    expect(fixtureNames('board')).toEqual([...boardEventTypes].sort());
    expect(fixtureNames('bot').filter((n) => !n.includes('.'))).toEqual([...botEventKinds].sort());
  });

  it.each(fixtureNames('board'))('board %s passes the schema', (name) => {
    expect(schemaProblems(validatorFor('board'), fixture('board', name))).toEqual([]);
  });

  it.each(fixtureNames('bot'))('bot %s passes the schema', (name) => {
    expect(schemaProblems(validatorFor('bot'), fixture('bot', name))).toEqual([]);
  });
});

describe.each(expressVersions)('every fixture reaches the right handler in %s', (_name, expressLib) => {
  it.each([...boardEventTypes])('board %s', async (type) => {
    const board = svcBoardWebhook({ secret: BOARD_SECRET, logger: silentLogger });
    const calls: string[] = [];
    for (const t of boardEventTypes) board.on(t, () => void calls.push(t));
    const event = fixture('board', type);
    await post(appWith(expressLib, board), board.path, signBoard(event)).expect(200);
    expect(calls).toEqual([type]);
  });

  it.each([...botEventKinds])('bot %s', async (kind) => {
    const bot = svcBotWebhook({ secret: BOT_SECRET, logger: silentLogger });
    const calls: Array<[string, unknown]> = [];
    for (const k of botEventKinds) bot.on(k, (data) => void calls.push([k, data]));
    const update = fixture('bot', kind);
    await post(appWith(expressLib, bot), bot.path, signBot(update)).expect(200);
    expect(calls).toEqual([[kind, update.event[kind]]]);
  });
});
