import assert from 'node:assert/strict';
import { test } from 'node:test';
import { svcBoardWebhook } from '../../../src';
import { boardEvent, deliverBoardEvent, silentLogger } from '../../../src/testing';

test('records the title of every new task', async () => {
  const secret = 'test-secret-at-least-16-chars';
  const titles: string[] = [];
  const board = svcBoardWebhook({ secret, logger: silentLogger }).on('task.created', (event) => {
    titles.push(event.task.title);
  });
  const event = boardEvent('task.created', { task: { title: 'Ship the CLI' } });
  await deliverBoardEvent(board, event, { secret }).expect(200, { ok: true });
  assert.deepEqual(titles, ['Ship the CLI']);
});
