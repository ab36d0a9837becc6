import express from 'express';
import { svcBoardWebhook } from '../../../src';
import { boardEvent, deliverBoardEvent, silentLogger } from '../../../src/testing';

test('records the title of every new task', async () => {
  const secret = 'test-secret-at-least-16-chars';
  const titles: string[] = [];
  const board = svcBoardWebhook({ secret, logger: silentLogger }).on('task.created', (event) => {
    titles.push(event.task.title);
  });
  const event = boardEvent('task.created', { task: { title: 'Ship the CLI' } });
  await deliverBoardEvent(express().use(board), event, { secret }).expect(200, { ok: true });
  expect(titles).toEqual(['Ship the CLI']);
});
