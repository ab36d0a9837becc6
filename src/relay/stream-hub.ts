import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StoredDelivery } from './relay-record';
import type { RelayStore } from './relay-store';
import { stillValid, type TokenEntry, type TokenOwner } from './relay-tokens';
import { deliveryFrame, HEARTBEAT_FRAME, helloFrame } from './sse-frames';

/**
 * The listeners' streams. Each connection pumps from the store on its own, from its own cursor, so
 * a slow listener holds back nobody: it is cut off when more than `maxBuffered` events wait unsent
 * in its connection or it has not drained within `drainTimeoutMs`, and resumes from its cursor when
 * it reconnects. Bounded: `maxPerListener` connections per token. Each connection remembers the
 * token it was opened with, so that revoking it (or replacing the name's token) ends it.
 */

export interface HubLimits {
  readonly maxPerListener: number;
  readonly maxBuffered: number;
  readonly drainTimeoutMs: number;
  readonly heartbeatMs: number;
}

export interface HubEvents {
  connected(name: string, cursor: number): void;
  disconnected(name: string, why: string): void;
}

class Connection {
  cursor: number;
  private pumping = false;
  private again = false;
  closed = false;
  readonly name: string;

  constructor(
    readonly owner: TokenOwner,
    readonly res: ServerResponse,
    cursor: number,
    private readonly hub: StreamHub,
  ) {
    this.name = owner.name;
    this.cursor = cursor;
  }

  /** Sends what the store has after the cursor; a call while it runs makes it look again. */
  pump(): void {
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    void this.run().finally(() => {
      this.pumping = false;
    });
  }

  private async run(): Promise<void> {
    do {
      this.again = false;
      for (;;) {
        if (this.closed) return;
        const batch = await this.hub.store.after(this.cursor, this.hub.limits.maxBuffered).catch(() => [] as StoredDelivery[]);
        if (batch.length === 0 || this.closed) break;
        let full = false;
        for (const record of batch) {
          full = !this.res.write(deliveryFrame({ ...record, mirror: this.hub.mirror === this.name }));
          this.cursor = record.seq;
        }
        if (full && !(await this.drained())) return;
      }
    } while (this.again);
  }

  /** Waits for the connection to drain; a listener that does not is cut off (it resumes from its cursor). */
  private drained(): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.res.off('drain', ok);
        this.hub.cut(this, `it did not read its stream within ${this.hub.limits.drainTimeoutMs} ms`);
        resolve(false);
      }, this.hub.limits.drainTimeoutMs);
      const ok = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      this.res.once('drain', ok);
    });
  }
}

export class StreamHub {
  private readonly connections = new Set<Connection>();
  private readonly heartbeat: NodeJS.Timeout;

  constructor(
    readonly store: RelayStore,
    readonly limits: HubLimits,
    readonly mirror: string | undefined,
    private readonly events: HubEvents,
  ) {
    this.heartbeat = setInterval(() => {
      // A connection that is not draining needs no keep-alive, and must not buffer one more thing.
      for (const c of this.connections) if (!c.res.writableNeedDrain) c.res.write(HEARTBEAT_FRAME);
    }, limits.heartbeatMs);
    this.heartbeat.unref();
  }

  /** How many connections `name` has open. */
  count(name: string): number {
    let n = 0;
    for (const c of this.connections) if (c.name === name) n++;
    return n;
  }

  /** Starts a stream for `owner` after `cursor` (the caller checked the token and the bound). */
  open(req: IncomingMessage, res: ServerResponse, start: { owner: TokenOwner; cursor: number; last: number; missed: boolean }): void {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      // nginx buffers responses unless told not to: events must go out as they are written.
      'X-Accel-Buffering': 'no',
      Connection: 'keep-alive',
    });
    const { name } = start.owner;
    res.write(helloFrame({ name, cursor: start.cursor, last: start.last, missed: start.missed, mirror: this.mirror ?? null }));
    const connection = new Connection(start.owner, res, start.cursor, this);
    this.connections.add(connection);
    this.events.connected(name, start.cursor);
    const gone = (): void => this.drop(connection, 'the listener disconnected');
    req.once('close', gone);
    res.once('close', gone);
    connection.pump();
  }

  /** A delivery was stored: every stream looks for it. */
  notify(): void {
    for (const c of this.connections) c.pump();
  }

  /** Whether a listener of this name is connected. */
  connected(name: string): boolean {
    return this.count(name) > 0;
  }

  /** Ends every stream opened with a token that `entries` no longer hold (revoked, or its name given a new one). */
  closeRevoked(entries: Readonly<Record<string, TokenEntry>>): void {
    for (const c of this.connections) if (!stillValid(entries, c.owner)) this.cut(c, 'its token was revoked');
  }

  cut(connection: Connection, why: string): void {
    this.drop(connection, why);
    connection.res.destroy();
  }

  close(): void {
    clearInterval(this.heartbeat);
    for (const c of this.connections) this.cut(c, 'the relay is stopping');
  }

  private drop(connection: Connection, why: string): void {
    if (connection.closed) return;
    connection.closed = true;
    this.connections.delete(connection);
    this.events.disconnected(connection.name, why);
  }
}
