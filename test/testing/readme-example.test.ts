import express from 'express';
import { svcBoardWebhook } from '../../src'; // in your project: from 'svc-webhooks'
import { boardEvent, deliverBoardEvent, silentLogger } from '../../src/testing'; // 'svc-webhooks/testing'

const secret = 'test-secret-at-least-16-chars';

test('records the title of every new task', async () => {
  const titles: string[] = [];
  const webhook = svcBoardWebhook({ secret, logger: silentLogger }).on('task.created', (event) => {
    titles.push(event.task.title);
  });
  const app = express().use(webhook);

  const event = boardEvent('task.created', { task: { title: 'Ship the CLI' } });
  await deliverBoardEvent(app, event, { secret }).expect(200, { ok: true });

  expect(titles).toEqual(['Ship the CLI']);
});
