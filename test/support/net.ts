import { readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';

/**
 * A TCP port on 127.0.0.1 that nothing listens on right now, chosen below the kernel's ephemeral
 * range. A server the tests restart on the same port (postgres, redis-server) would otherwise find
 * it taken while it was down: an outgoing connection's local port, or a client retrying its
 * connection that connected to itself (TCP simultaneous open), which then fails the restart.
 */
export async function freePort(): Promise<number> {
  const [low] = ephemeralRange();
  const floor = 10_000;
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = floor + Math.floor(Math.random() * (low - floor));
    if (await listensOn(port)) return port;
  }
  return listensOn(0).then((port) => {
    if (port === false) throw new Error('no free TCP port on 127.0.0.1');
    return port;
  });
}

/** Listens on `port` (0: any) for a moment; the port it got, or false when it is taken. */
function listensOn(port: number): Promise<number | false> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => {
      const got = (srv.address() as { port: number }).port;
      srv.close(() => resolve(got));
    });
  });
}

/** Linux's ephemeral port range (its default when it cannot be read). */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (low !== undefined && high !== undefined && low > 10_500) return [low, high];
  } catch {
    // Not Linux: its default range.
  }
  return [32_768, 60_999];
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Polls `check` until it holds; throws `message` after `timeoutMs`. */
export async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, message: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(message);
}
