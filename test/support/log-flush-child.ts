/**
 * A process that handles `COUNT` deliveries with the default logger (stdout), then ends the way
 * `MODE` says: `close` (close() resolves, then SIGKILL), `crash` (an uncaught exception) or `kill`
 * (SIGKILL at once, without close()). `MODE=exit` logs one line and calls process.exit() in the
 * same tick. After the deliveries, stderr gets `LOADED {...}`: whether setting up the webhook
 * loaded pino, and whether its lines and deliveries loaded undici (Node's fetch).
 */
import express from 'express';
import { svcBoardWebhook } from '../../src';
import { webhookLoggers } from '../../src/internal/logging/webhook-loggers';
import { boardEvent, deliverBoardEvent } from '../../src/testing';

const secret = 'log-flush-secret-0123456789abcdef';

async function main(): Promise<void> {
  if (process.env.MODE === 'exit') {
    webhookLoggers(undefined, 'board', []).logger.warn('logged just before process.exit()');
    process.exit(0);
  }
  const before = loaded();
  const webhook = svcBoardWebhook(secret).on('task.updated', () => undefined);
  const setUp = loaded();
  const app = express().use(webhook);
  for (let i = 0; i < Number(process.env.COUNT); i++) {
    const res = await deliverBoardEvent(app, boardEvent('task.updated'), { secret });
    if (res.status !== 200) throw new Error(`delivery answered ${res.status}`);
  }
  await new Promise((resolve) => setImmediate(resolve));
  const after = loaded();
  process.stderr.write(`LOADED ${JSON.stringify({ pino: setUp.pino && !before.pino, undici: after.undici && !before.undici })}\n`);
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

function loaded(): { pino: boolean; undici: boolean } {
  return {
    pino: Object.keys(require.cache).some((file) => /[\\/]node_modules[\\/]pino[\\/]/.test(file)),
    undici: (process as unknown as { moduleLoadList: string[] }).moduleLoadList.some((name) => name.includes('undici')),
  };
}

void main();
