import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeHandler, svcBoardWebhook } from '../../../src';
import { SvcClient } from '../../../src/client';
import { watchWebhooks } from '../../../src/watch';
import { createFakeSvc, silentLogger } from '../../../src/testing';

const HOUR = 60 * 60 * 1000;

test('a connected board gets each event once, survives a day down, and is re-enabled', async () => {
  const secret = 'our-board-secret-at-least-16-chars';
  const handled: string[] = [];
  let down = false;
  const receive = createNodeHandler(svcBoardWebhook({ secret, logger: silentLogger }).onAny((event) => void handled.push(event.id)));
  const receiver = createServer((req, res) => (down ? res.writeHead(503).end() : receive(req, res)));
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const local = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

  // svc only takes public https urls: the emulator forwards this one to our receiver, like a tunnel.
  const svc = await createFakeSvc({
    clock: 'manual',
    forward: { 'https://hooks.example.com': local },
    chaos: { seed: 42, duplicateRate: 0.1, reorderWindow: 5 },
  });
  const client = new SvcClient({ baseUrl: svc.baseUrl, token: svc.person.token });
  try {
    await client.setBoardWebhook(svc.board.id, { url: 'https://hooks.example.com/webhooks/board', secret });

    for (let i = 0; i < 200; i++) svc.emitBoardEvent({ type: 'task.updated' });
    await svc.advance(0);
    svc.audit.assertAllDelivered();
    svc.audit.assertNoneHandledTwice(handled);
    expect(handled).toHaveLength(200);

    // A 25-hour outage: svc retries for a day, then disables the webhook and drops its queue.
    down = true;
    svc.emitBoardEvent({ type: 'task.created' });
    await svc.advance(25 * HOUR);
    expect(await client.getBoardWebhook(svc.board.id)).toMatchObject({ enabled: false, pending: 0 });

    // Back up: the watcher pings the receiver through svc, then re-enables the webhook with our secret.
    down = false;
    const watcher = watchWebhooks({
      client,
      boards: [svc.board.id],
      secret,
      expectUrl: 'https://hooks.example.com/webhooks/board',
      reenable: true,
      logger: false,
    });
    await watcher.checked();
    await watcher.close();
    expect(await client.getBoardWebhook(svc.board.id)).toMatchObject({ enabled: true, disabledAt: null });

    const next = svc.emitBoardEvent({ type: 'task.created' });
    await svc.advance(0);
    expect(handled.at(-1)).toBe(next.id);
  } finally {
    await svc.close();
    await new Promise((resolve) => receiver.close(resolve));
  }
});
