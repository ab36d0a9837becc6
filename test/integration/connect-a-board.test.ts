/**
 * The "Connecting a board" recipe of docs/many-boards.md, end to end: the setup client asks svc for
 * a board webhook with a generated secret, the integration stores it, and the running receiver's resolver reads it.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeHandler, svcBoardWebhook, svcBotWebhook } from '../../src';
import { SvcClient } from '../../src/client';
import { createFakeSvc, signBotUpdate, botUpdate, type FakeSvc } from '../../src/testing';
import { silentLogger } from '../support/apps';

const PUBLIC_URL = 'https://hooks.example.com/webhooks/board';

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('connecting a board to a running receiver', () => {
  let svc: FakeSvc;
  let server: Server;
  let receiverBase = '';
  // The integration's own secret store (a database table in a real integration).
  const boardSecrets = new Map<string, string>();
  const pings: string[] = [];
  const board = svcBoardWebhook({ secret: ({ boardId }) => boardSecrets.get(boardId), logger: silentLogger }).on(
    'ping',
    (event) => void pings.push(event.board.id),
  );

  beforeAll(async () => {
    server = createServer(createNodeHandler(board));
    receiverBase = await listen(server);
    // svc delivers to the public URL; here it reaches the local receiver, as a tunnel would.
    svc = await createFakeSvc({ clock: 'manual', forward: { 'https://hooks.example.com': receiverBase } });
  });
  afterAll(async () => {
    await svc.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** The recipe: set the webhook with an empty secret, keep the secret svc returns once. */
  async function connect(client: SvcClient, boardId: string): Promise<void> {
    const { generatedSecret } = await client.setBoardWebhook(boardId, { url: PUBLIC_URL, secret: '' });
    if (generatedSecret === undefined) throw new Error('svc returned no secret');
    boardSecrets.set(boardId, generatedSecret);
    board.forgetSecret(boardId); // a delivery that came before is not remembered as "unknown"
  }

  it('handles the next delivery of each board connected while it runs, each with its own secret', async () => {
    const client = new SvcClient({ baseUrl: svc.baseUrl, token: svc.person.token });
    const second = svc.addBoard({ managers: [svc.person] }).id;

    await connect(client, svc.board.id);
    expect(await client.pingBoardWebhook(svc.board.id)).toMatchObject({ ok: true, status: 200 });

    await connect(client, second);
    expect(await client.pingBoardWebhook(second)).toMatchObject({ ok: true, status: 200 });

    expect(pings).toEqual([svc.board.id, second]);
    expect(boardSecrets.get(svc.board.id)).not.toBe(boardSecrets.get(second));
    expect(svc.secretMatches({ boardId: second }, boardSecrets.get(second)!)).toBe(true);
  });

  it('after a disconnect (secret dropped and forgotten), the board is refused as unknown', async () => {
    const client = new SvcClient({ baseUrl: svc.baseUrl, token: svc.person.token });
    const third = svc.addBoard({ managers: [svc.person] }).id;
    await connect(client, third);
    boardSecrets.delete(third);
    board.forgetSecret(third);
    await svc.advance(11_000); // past svc's ping rate limit
    const ping = await client.pingBoardWebhook(third);
    expect(ping).toMatchObject({ ok: false, status: 401 });
    expect(String(ping.error)).toContain('unknown_board');
  });
});

describe('one server hosting several bots, one path per bot', () => {
  let svc: FakeSvc;
  let server: Server;
  let base = '';
  const botSecrets = new Map<string, string>();
  const seen: string[] = [];
  const bot = svcBotWebhook({ path: '/webhooks/bots/:botId', secret: ({ botId }) => botSecrets.get(botId), logger: silentLogger }).on(
    'messageCreate',
    (data) => void seen.push(data.message.content),
  );

  beforeAll(async () => {
    server = createServer(createNodeHandler(bot));
    base = await listen(server);
    // svc delivers to the public URL; here it reaches the local server, as a tunnel would.
    svc = await createFakeSvc({ clock: 'manual', forward: { 'https://bots.example.com': base } });
  });
  afterAll(async () => {
    await svc.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("sets the bot webhook with a secret of its own, stores it, and handles the next update at that bot's path", async () => {
    const client = new SvcClient({ baseUrl: svc.baseUrl, token: svc.bot.token });
    const secret = randomBytes(32).toString('base64url');
    await client.setBotWebhook({ url: `https://bots.example.com/webhooks/bots/${svc.bot.id}`, secret });
    botSecrets.set(svc.bot.id, secret);
    bot.forgetSecret(svc.bot.id);

    // svc signs with the secret it holds for this bot, and posts to the url set for it.
    svc.emitBotUpdate({ kind: 'messageCreate', data: { message: { content: 'hello' } } });
    await svc.advance(0);
    svc.audit.assertAllDelivered();
    expect(svc.audit.attempts().map((a) => a.status)).toEqual([200]);
    // The same delivery at another bot's path is refused: that bot has no secret here.
    const signed = signBotUpdate(botUpdate('messageCreate', { message: { content: 'hello' } }, { botUserId: svc.bot.id }), { secret });
    const other = await fetch(`${base}/webhooks/bots/another-bot`, { method: 'POST', headers: signed.headers, body: signed.body });
    expect([other.status, ((await other.json()) as { code: string }).code]).toEqual([401, 'unknown_bot']);
    expect(seen).toEqual(['hello']);
  });
});
