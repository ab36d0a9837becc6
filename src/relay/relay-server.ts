import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendOutcome } from '../adapters/node/node-request';
import { SvcWebhookError } from '../errors';
import { answerOf } from '../receive/outcome';
import { MirrorWaits, mirroredStatus } from './mirror';
import { authenticate, readSmallJson, refuse, sendJson } from './relay-access';
import { asRefusal, type Intake } from './relay-intake';
import type { IncomingDelivery, StoredDelivery } from './relay-record';
import type { RelayStore } from './relay-store';
import type { TokenBackend } from './relay-tokens';
import { StreamHub, type HubLimits } from './stream-hub';

/**
 * The relay's HTTP server: svc's deliveries on the webhook paths (verified, stored, then answered),
 * the listeners' stream, their mirror reports and replays. Everything it reports goes through
 * `log` as one line of facts: ids, types, statuses; never a secret, token or signature.
 */

export interface RelayConfig {
  readonly host: string;
  readonly port: number;
  readonly intakes: readonly Intake[];
  readonly store: RelayStore;
  readonly tokens: TokenBackend;
  readonly mirror: string | undefined;
  readonly limits: HubLimits;
  /** How often expired deliveries are dropped, and revoked tokens' streams closed, in ms. */
  readonly housekeepingMs: number;
  readonly log: (line: string) => void;
}

export interface RunningRelay {
  readonly url: string;
  close(): Promise<void>;
}

/** svc waits 10 s; a mirrored answer must be back before that, with a margin for the way back. */
const MIRROR_WAIT_MS = 9_000;
const STREAM_PATH = '/relay/stream';
const ANSWERS_PATH = '/relay/answers';
const DELIVERIES_PATH = '/relay/deliveries/';

export async function startRelay(config: RelayConfig): Promise<RunningRelay> {
  const { store, tokens, log } = config;
  const mirror = config.mirror === undefined ? undefined : new MirrorWaits(config.mirror);
  const hub = new StreamHub(store, config.limits, config.mirror, {
    connected: (name, cursor) => log(`listener ${name} connected, from #${cursor}`),
    disconnected: (name, why) => log(`listener ${name} disconnected: ${why}`),
  });

  async function delivery(intake: Intake, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = Date.now();
    let incoming: IncomingDelivery;
    try {
      incoming = await intake.intake(req, started);
    } catch (err) {
      const refusal = asRefusal(err);
      log(`refused ${intake.webhook} delivery: ${refusal.status} ${refusal.code}`);
      // Refused before its body was read whole (forged, oversized): close rather than read the rest.
      sendOutcome(res, answerOf(refusal, !req.readableEnded));
      return;
    }
    let stored: StoredDelivery;
    try {
      stored = await store.append(incoming);
    } catch {
      log(`could not store ${incoming.webhook} delivery ${incoming.id}: answered 503, svc retries it`);
      sendOutcome(res, answerOf(new SvcWebhookError('store_unavailable', 'the relay could not store the delivery; retry later', { retryAfter: 5 })));
      return;
    }
    log(`stored #${stored.seq} ${stored.webhook} ${stored.scope} ${stored.type} ${stored.id}`);
    hub.notify();
    if (mirror === undefined) return sendJson(res, 200, { ok: true, seq: stored.seq });
    if (!hub.connected(mirror.listener)) {
      log(`#${stored.seq}: listener ${mirror.listener} is not connected: answered 504`);
      return refuse(res, 504, 'mirror_not_connected', 'stored; the mirrored listener is not connected, so svc is answered 504');
    }
    const answer = await mirror.wait(stored.seq, MIRROR_WAIT_MS - (Date.now() - started));
    const status = mirroredStatus(answer);
    log(`#${stored.seq}: mirrored ${mirror.listener}'s answer: ${status}`);
    if (status >= 200 && status < 300) return sendJson(res, status, { ok: true, seq: stored.seq, mirrored: status });
    refuse(
      res,
      status >= 100 && status < 600 ? status : 502,
      'mirrored',
      `stored; ${mirror.listener}'s local receiver answered ${answer?.status ?? 'nothing in time'}`,
    );
  }

  async function stream(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const owner = await authenticate(req, res, tokens);
    if (owner === undefined) return;
    const last = await store.lastSeq();
    const oldest = (await store.after(0, 1))[0]?.seq ?? last + 1;
    const given = req.headers['last-event-id'];
    const from = typeof given === 'string' && /^\d{1,15}$/.test(given) ? Number(given) : url.searchParams.get('from') === 'start' ? 0 : last;
    // A cursor past the relay's newest (a relay whose data was lost) starts from the newest.
    const cursor = Math.min(from, last);
    // Counted right before the stream opens, with no wait between: streams opened at once cannot both pass.
    if (hub.count(owner.name) >= config.limits.maxPerListener)
      return refuse(res, 429, 'too_many_streams', `listener ${owner.name} has ${config.limits.maxPerListener} streams open already`);
    hub.open(req, res, { owner, cursor, last, missed: cursor < oldest - 1 && cursor > 0 });
  }

  async function report(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const owner = await authenticate(req, res, tokens);
    if (owner === undefined) return;
    const body = (await readSmallJson(req, 1024)) as { seq?: unknown; status?: unknown } | undefined;
    const seq = body?.seq;
    const status = body?.status;
    if (typeof seq !== 'number' || typeof status !== 'number' || !Number.isInteger(status) || status < 0 || status > 599)
      return refuse(res, 400, 'invalid_report', 'a report is {"seq": <number>, "status": <0 to 599>}');
    const taken = mirror?.answer(owner.name, seq, { status }) ?? false;
    sendJson(res, 200, { ok: true, taken });
  }

  async function find(req: IncomingMessage, res: ServerResponse, ref: string): Promise<void> {
    const owner = await authenticate(req, res, tokens);
    if (owner === undefined) return;
    const found = await store.find(ref).catch(() => null);
    if (found === null) return refuse(res, 503, 'store_unavailable', 'the relay could not read its store; retry later');
    if (found === undefined) return refuse(res, 404, 'not_found', 'no delivery with this id or sequence number is kept (or it is older than the retention)');
    sendJson(res, 200, { ok: true, delivery: found });
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://relay');
    const path = url.pathname.length > 1 ? url.pathname.replace(/\/$/, '') : url.pathname;
    const method = req.method ?? 'GET';
    const intake = config.intakes.find((i) => i.matches(path));
    if (intake !== undefined) {
      if (method !== 'POST') return refuse(res, 405, 'method_not_allowed', 'webhook deliveries are POST requests');
      return delivery(intake, req, res);
    }
    if (path === STREAM_PATH && method === 'GET') return stream(req, res, url);
    if (path === ANSWERS_PATH && method === 'POST') return report(req, res);
    if (path.startsWith(DELIVERIES_PATH) && method === 'GET') return find(req, res, decodeURIComponent(path.slice(DELIVERIES_PATH.length)));
    if (path === '/relay/health' && method === 'GET') return sendJson(res, 200, { ok: true });
    refuse(res, 404, 'not_found', `nothing here; svc delivers to ${config.intakes.map((i) => i.path).join(' or ')}`);
  }

  const server: Server = createServer((req, res) => {
    route(req, res).catch(() => {
      if (!res.headersSent) sendOutcome(res, answerOf(new SvcWebhookError('internal_error', 'internal error')));
      else res.destroy();
    });
  });
  // A request's headers and body within svc's own deadline; a stream lives as long as its listener.
  server.headersTimeout = 10_000;
  server.requestTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const housekeeping = setInterval(() => void housekeep(), config.housekeepingMs);
  housekeeping.unref();
  async function housekeep(): Promise<void> {
    const dropped = await store.prune(Date.now()).catch(() => 0);
    if (dropped > 0) log(`dropped ${dropped} deliveries past the retention`);
    // A revoked token's streams end: revocation needs no restart. Checked by the token, not its
    // name: a name revoked and created again does not keep the old token's streams.
    const entries = await tokens.read().catch(() => undefined);
    if (entries !== undefined) hub.closeRevoked(entries);
  }
  const { port } = server.address() as AddressInfo;
  const shownHost = config.host.includes(':') ? `[${config.host}]` : config.host;
  return {
    url: `http://${shownHost}:${port}`,
    async close() {
      clearInterval(housekeeping);
      hub.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await store.close();
    },
  };
}
