import express from 'express';
import { svcBotWebhook } from '../../../src';
import { botCommand, botUpdate, deliverBotUpdate, silentLogger } from '../../../src/testing';

const secret = 'test-secret-at-least-16-chars';

test('deploys on /deploy', async () => {
  const deployed: string[] = [];
  const bot = svcBotWebhook({ secret, logger: silentLogger }).command('deploy', (data) => {
    deployed.push(data.message.command.args);
  });
  const app = express().use(bot);

  await deliverBotUpdate(app, botCommand('deploy', 'staging'), { secret }).expect(200);
  await deliverBotUpdate(app, botUpdate('messageReactionAdd', { emoji: '👍' }), { secret }).expect(200);
  expect(deployed).toEqual(['staging']);
});
