/**
 * A process that handles `COUNT` deliveries with the default logger (stdout), then ends the way
 * `MODE` says: `close` (close() resolves, then SIGKILL), `crash` (an uncaught exception) or `kill`
 * (SIGKILL at once, without close()).
 */
import express from 'express';
import { svcBoardWebhook } from '../../src';
import { boardEvent, deliverBoardEvent } from '../../src/testing';

const secret = 'log-flush-secret-0123456789abcdef';

async function main(): Promise<void> {
  const webhook = svcBoardWebhook(secret).on('task.updated', () => undefined);
  const app = express().use(webhook);
  for (let i = 0; i < Number(process.env.COUNT); i++) {
    const res = await deliverBoardEvent(app, boardEvent('task.updated'), { secret });
    if (res.status !== 200) throw new Error(`delivery answered ${res.status}`);
  }
  switch (process.env.MODE) {
    case 'close':
      await webhook.close();
      process.kill(process.pid, 'SIGKILL');
      break;
    case 'crash':
      setImmediate(() => {
        throw new Error('the process crashes');
      });
      break;
    default:
      process.kill(process.pid, 'SIGKILL');
  }
}

void main();
