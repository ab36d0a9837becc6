/**
 * `npm start -- --emulate`: the example server fed by an emulated svc in its own process. A
 * newcomer with no svc account sees svc's deliveries reach the inspector within 10 s of the start,
 * and the watcher's panel reading what the emulated svc reports.
 */
import { request as httpRequest } from 'node:http';
import { startExampleServer, type ExampleServer } from '../support/example-server';

function inspectorGet(base: string, path: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path, headers: { host: 'localhost' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function within<T>(ms: number, read: () => Promise<T | undefined>): Promise<T | undefined> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('npm start -- --emulate', () => {
  let server: ExampleServer | undefined;
  afterAll(() => server?.stop());

  it("shows svc's verified deliveries in the inspector within 10 s, and the watcher's states, printing no token", async () => {
    server = await startExampleServer({ HOST: '127.0.0.1' }, 30_000, ['--emulate']);
    const started = Date.now();
    const deliveries = await within(10_000, async () => {
      const { status, body } = await inspectorGet(server!.base, '/inspector/deliveries');
      expect(status).toBe(200);
      const list = (JSON.parse(body) as { deliveries: Array<{ verified: boolean; outcome: string; status: number }> }).deliveries;
      return list.some((d) => d.outcome === 'handled') ? list : undefined;
    });
    expect(deliveries).toBeDefined();
    expect(Date.now() - started).toBeLessThan(10_000);
    // svc delivers at least once: the emulator's repeats are answered as duplicates, all verified.
    expect(deliveries!.every((d) => d.verified && d.status === 200)).toBe(true);
    expect(deliveries!.some((d) => d.outcome === 'handled')).toBe(true);
    const panel = await within(10_000, async () => {
      const body = JSON.parse((await inspectorGet(server!.base, '/inspector/webhooks')).body) as {
        watching: boolean;
        webhooks: Array<{ webhook: string; state: string }>;
      };
      return body.webhooks.length === 2 ? body : undefined;
    });
    expect(panel?.webhooks.map((w) => [w.webhook, w.state])).toEqual([
      ['board', 'healthy'],
      ['bot', 'healthy'],
    ]);
    expect(server.output()).toContain('emulated svc: the webhooks are set');
    expect(server.output()).not.toMatch(/svc_bot_[0-9a-f-]{36}_[A-Za-z0-9_-]{43}/);
    expect(server.output()).not.toMatch(/person_[A-Za-z0-9_-]{43}/);
  }, 60_000);
});
