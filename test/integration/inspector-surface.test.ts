import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { deliveryInspector, MAX_BACKLOG_BYTES, type DeliveryInspector } from '../../examples/inspector/delivery-inspector';

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

  it('answers this machine\'s names and the configured ones, and refuses any other Host (DNS rebinding) -> 403', async () => {
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'dev.example.test']) expect((await get('/inspector/deliveries', host)).status).toBe(200);
    for (const path of ['/inspector', '/inspector/deliveries', '/inspector/events', '/inspector/inspector.js']) {
      expect((await get(path, `attacker.example:${port}`)).status).toBe(403);
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
    for (let i = 0; i < 40; i++) inspector.add({ webhook: 'board', deliveryId: `id-${i}`, outcome: 'handled', status: 200, durationMs: 1, receivedAt: Date.now(), verified: true, payload: big });
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
    for (let i = 0; i < 40; i++) inspector.add({ webhook: 'board', deliveryId: `w-${i}`, outcome: 'handled', status: 200, durationMs: 1, receivedAt: Date.now(), verified: true, payload: wide });
    const first = await get('/inspector/events', 'localhost');
    expect(Buffer.byteLength(first.text)).toBeLessThan(MAX_BACKLOG_BYTES + 4096);
    expect((JSON.parse(/data: (.*)\n/.exec(first.text)![1]!) as { truncated: boolean }).truncated).toBe(true);
  });
});
