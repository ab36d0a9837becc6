import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { deliveryInspector, MAX_BACKLOG_BYTES, type DeliveryInspector, type DeliveryInspectorOptions } from '../../examples/inspector/delivery-inspector';

interface Answer {
  status: number;
  headers: Record<string, unknown>;
  /** The body, or for an event stream the first event. */
  text: string;
}

describe('the delivery inspector as an attacker reaches it', () => {
  let server: Server;
  let port = 0;
  let inspector: DeliveryInspector;

  beforeAll(async () => {
    inspector = deliveryInspector({ allowedHosts: ['dev.example.test'], maxClients: 2, maxBodyChars: 64 * 1024 });
    const app = express().use(inspector.router);
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    inspector.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  /** A GET with the given Host header; an event stream is read up to its first event, then closed. */
  function get(path: string, host: string): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          if (res.headers['content-type']?.startsWith('text/event-stream') && text.includes('\n\n', text.indexOf('event: snapshot'))) {
            resolve({ status: res.statusCode!, headers: res.headers, text });
          }
        });
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  it("answers this machine's names and the configured ones, and refuses any other Host (DNS rebinding) -> 403", async () => {
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'dev.example.test'])
      expect((await get('/inspector/deliveries', host)).status).toBe(200);
    for (const path of ['/inspector', '/inspector/deliveries', '/inspector/events', '/inspector/inspector.js']) {
      expect((await get(path, `attacker.example:${port}`)).status).toBe(403);
    }
  });

  it('once closed for shutdown, refuses a new event stream (a page reconnecting) -> 503, and ends the answer', async () => {
    const closing = deliveryInspector({});
    const app = express().use(closing.router);
    const other = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => other.once('listening', resolve));
    try {
      closing.close();
      const res = await fetch(`http://127.0.0.1:${(other.address() as AddressInfo).port}/inspector/events`);
      expect(res.status).toBe(503);
      expect(res.headers.get('connection')).toBe('close');
      expect(await res.text()).toMatch(/shutting down/);
    } finally {
      other.closeAllConnections();
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it('caps the open event streams: beyond maxClients -> 503', async () => {
    const held: Array<() => void> = [];
    const open = (): Promise<number> =>
      new Promise((resolve) => {
        const req = httpRequest({ host: '127.0.0.1', port, path: '/inspector/events', headers: { host: 'localhost' } }, (res) => {
          held.push(() => req.destroy());
          resolve(res.statusCode!);
        });
        req.end();
      });
    expect([await open(), await open(), await open()]).toEqual([200, 200, 503]);
    for (const close of held) close();
  });

  it('holds the first snapshot, like the live events, to the backlog bound: the newest deliveries that fit', async () => {
    const big = { text: 'x'.repeat(60 * 1024) };
    for (let i = 0; i < 40; i++)
      inspector.add({
        webhook: 'board',
        deliveryId: `id-${i}`,
        outcome: 'handled',
        status: 200,
        durationMs: 1,
        receivedAt: Date.now(),
        verified: true,
        payload: big,
      });
    const first = await get('/inspector/events', 'localhost');
    expect(first.text.length).toBeLessThan(MAX_BACKLOG_BYTES + 4096);
    const data = JSON.parse(/data: (.*)\n/.exec(first.text)![1]!) as { truncated: boolean; deliveries: Array<{ deliveryId: string }> };
    expect(data.truncated).toBe(true);
    expect(data.deliveries[0]!.deliveryId).toBe('id-39');
    const listed = await get('/inspector/deliveries', 'localhost');
    expect(listed.text.length).toBeLessThan(MAX_BACKLOG_BYTES + 4096);
  });

  it('counts that bound in bytes as sent, for text beyond ASCII too', async () => {
    const wide = { text: '€'.repeat(20 * 1024) }; // 60 KB of UTF-8 in 20 K characters
    for (let i = 0; i < 40; i++)
      inspector.add({
        webhook: 'board',
        deliveryId: `w-${i}`,
        outcome: 'handled',
        status: 200,
        durationMs: 1,
        receivedAt: Date.now(),
        verified: true,
        payload: wide,
      });
    const first = await get('/inspector/events', 'localhost');
    expect(Buffer.byteLength(first.text)).toBeLessThan(MAX_BACKLOG_BYTES + 4096);
    expect((JSON.parse(/data: (.*)\n/.exec(first.text)![1]!) as { truncated: boolean }).truncated).toBe(true);
  });
});

describe('who may read the delivery inspector', () => {
  const TOKEN = 'an-access-token-of-at-least-32-characters-xyz';

  /** An app serving an inspector that holds one verified delivery; `localAddress` stands for the interface a connection arrived on. */
  async function serve(options: DeliveryInspectorOptions, localAddress?: string): Promise<{ port: number; close: () => Promise<void> }> {
    const inspector = deliveryInspector(options);
    inspector.add({
      webhook: 'board',
      deliveryId: 'the-delivery',
      outcome: 'handled',
      status: 200,
      durationMs: 1,
      receivedAt: Date.now(),
      verified: true,
      payload: { note: 'private' },
    });
    const server = express().use(inspector.router).listen(0, '127.0.0.1');
    if (localAddress !== undefined) server.on('connection', (socket) => Object.defineProperty(socket, 'localAddress', { value: localAddress }));
    await new Promise((resolve) => server.once('listening', resolve));
    return {
      port: (server.address() as AddressInfo).port,
      close: async () => {
        inspector.close();
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      },
    };
  }

  function get(port: number, path: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path, headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  it('without a token, refuses a connection that did not arrive on a loopback address, even with Host: localhost -> 403', async () => {
    const remote = await serve({}, '192.0.2.10');
    const local = await serve({}, '::ffff:127.0.0.1');
    try {
      const refused = await get(remote.port, '/inspector/deliveries', { host: 'localhost' });
      expect(refused.status).toBe(403);
      expect(refused.text).not.toContain('private');
      expect((await get(local.port, '/inspector/deliveries', { host: 'localhost' })).status).toBe(200);
    } finally {
      await remote.close();
      await local.close();
    }
  });

  it.each([
    ['X-Forwarded-For', { 'x-forwarded-for': '203.0.113.7' }],
    ['X-Real-IP', { 'x-real-ip': '203.0.113.7' }],
    ['Forwarded', { forwarded: 'for=203.0.113.7' }],
  ])(
    'without a token, refuses a loopback request a proxy forwarded (%s; nginx rewrites Host) -> 403, and logs how to turn on the token, once',
    async (_name, proxied) => {
      const warnings: Array<[object, string]> = [];
      const logger = { warn: (fields: object, message: string) => void warnings.push([fields, message]) };
      const local = await serve({ logger }, '127.0.0.1');
      try {
        for (let i = 0; i < 2; i++) {
          const refused = await get(local.port, '/inspector/deliveries', { host: 'localhost', ...proxied });
          expect(refused.status).toBe(403);
          expect(refused.text).not.toContain('private');
        }
        expect(warnings).toHaveLength(1);
        expect(warnings[0]![1]).toContain('SVC_INSPECTOR=token');
        expect((await get(local.port, '/inspector/deliveries', { host: 'localhost' })).status).toBe(200);
      } finally {
        await local.close();
      }
    },
  );

  it('with a token, answers a forwarded request that carries it', async () => {
    const proxied = await serve({ accessToken: TOKEN }, '127.0.0.1');
    try {
      expect(
        (await get(proxied.port, '/inspector/deliveries', { host: 'localhost', 'x-forwarded-for': '203.0.113.7', authorization: `Bearer ${TOKEN}` })).status,
      ).toBe(200);
    } finally {
      await proxied.close();
    }
  });

  describe('with an access token', () => {
    it('answers a request carrying it in Authorization, from any interface and Host', async () => {
      const app = await serve({ accessToken: TOKEN }, '192.0.2.10');
      try {
        const ok = await get(app.port, '/inspector/deliveries', { host: 'inspector.example.com', authorization: `Bearer ${TOKEN}` });
        expect(ok.status).toBe(200);
        expect(ok.text).toContain('private');
      } finally {
        await app.close();
      }
    });

    it('refuses anything else -> 401: no token, a wrong one, the token in the URL', async () => {
      const app = await serve({ accessToken: TOKEN });
      try {
        for (const [path, headers] of [
          ['/inspector/deliveries', { host: 'localhost' }],
          ['/inspector/events', { host: 'localhost' }],
          ['/inspector/deliveries', { authorization: `Bearer ${TOKEN}x` }],
          ['/inspector/deliveries', { authorization: TOKEN }],
          ['/inspector/deliveries', { cookie: `svc_inspector_access=${TOKEN.slice(1)}` }],
          [`/inspector/deliveries?token=${TOKEN}`, {}],
          [`/inspector/deliveries?access_token=${TOKEN}`, {}],
        ] as const) {
          const answer = await get(app.port, path, headers);
          expect([path, answer.status]).toEqual([path, 401]);
          expect(answer.text).not.toContain('private');
        }
      } finally {
        await app.close();
      }
    });

    it('shows a form for the token on the page, which posts it (never a GET) under a strict policy', async () => {
      const app = await serve({ accessToken: TOKEN });
      try {
        const page = await get(app.port, '/inspector', {});
        expect(page.status).toBe(401);
        expect(page.text).toContain('<form method="post" action="/inspector/access">');
        expect(page.text).not.toContain(TOKEN);
        expect(page.headers['content-security-policy']).toContain("default-src 'none'");
        expect(page.headers['cache-control']).toBe('no-store');
      } finally {
        await app.close();
      }
    });

    it('is refused at setup when it is shorter than 32 characters', () => {
      expect(() => deliveryInspector({ accessToken: 'short' })).toThrow(TypeError);
    });
  });
});
