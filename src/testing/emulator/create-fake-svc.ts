import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiFaults } from './api-faults';
import { DeliveryAudit } from './audit';
import { manualClock, realClock } from './clock';
import { controlRoute } from './control-routes';
import { DeliveryEngine } from './delivery-engine';
import { readTargetRules } from './delivery-target';
import { Directory } from './directory';
import { EmulatorCore } from './emulator-core';
import { FakeSvcError } from './emulator-error';
import { readFakeSvcOptions } from './fake-svc-options';
import { ApiTraffic } from './api-traffic';
import type { FakeSvc, FakeSvcOptions } from './fake-svc-types';
import { STATE_TIME_FORMATS } from './webhook-record';
import { ApiRefusal, readBody, sendRefusal } from './http-answer';
import { seededRandom } from './random';
import { EMULATED_VERSION, svcRoute, type RouteSettings } from './svc-routes';

function listen(server: ReturnType<typeof createServer>, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

function urlHost(address: AddressInfo): string {
  return address.family === 'IPv6' ? `[${address.address}]` : address.address;
}

/**
 * Starts an emulator of svc's webhooks on this machine: GET /api/version, the bot and board
 * webhook routes with svc's rules for tokens, secrets and urls, and a delivery engine that signs
 * and POSTs events as svc does, retries them on svc's schedule, disables a webhook failing for a
 * day and pauses board webhooks on a plan drop. One board (Business plan), a person who manages
 * it, and a bot exist from the start. Close it when done.
 *
 * @example
 * ```ts
 * const svc = await createFakeSvc({ clock: 'manual', allowLoopback: true });
 * svc.emitBoardEvent({ type: 'task.created' });
 * await svc.advance(0);
 * svc.audit.assertAllDelivered();
 * await svc.close();
 * ```
 */
export async function createFakeSvc(options: FakeSvcOptions = {}): Promise<FakeSvc> {
  const read = readFakeSvcOptions(options);
  const faults = new ApiFaults();
  const settings: RouteSettings = { botGetWrapped: read.botGetWrapped, version: { ...EMULATED_VERSION, ...read.versionInfo }, faults };
  const chaos = read.chaos;
  const targets = readTargetRules(read.forward, read.allowedHosts);
  const clock = read.clock === 'manual' ? manualClock(read.startAt ?? Date.now()) : realClock();
  const audit = new DeliveryAudit(read.maxAuditEntries);
  const directory = new Directory();
  const engine = new DeliveryEngine({ clock, chaos, random: seededRandom(chaos.seed), audit, targets });
  const core = new EmulatorCore({ directory, engine, clock, audit, allowLoopback: read.allowLoopback });
  const board = directory.addBoard({ key: 'ENG', name: 'Engineering' });
  const traffic = new ApiTraffic({
    apiDelayMs: read.apiDelayMs,
    recordRequests: read.recordRequests,
    ...(read.apiRateLimit === undefined ? {} : { apiRateLimit: read.apiRateLimit }),
  });
  let closed = false;
  const open = (): void => {
    if (closed) throw new FakeSvcError('closed', 'the emulator was closed');
  };

  const svc: FakeSvc = {
    baseUrl: '',
    board,
    person: directory.addPerson([board.id]),
    bot: directory.addBot(),
    manualClock: clock.manual,
    audit,
    addBoard: (input) => directory.addBoard(input),
    addBot: () => directory.addBot(),
    addPerson: (boardIds) => directory.addPerson(boardIds),
    boards: () => [...directory.boards.values()].map((b) => ({ ...b })),
    bots: () => directory.botIds(),
    emitBoardEvent: ({ boardId = board.id, ...input }) => (open(), core.emitBoardEvent(boardId, input)),
    emitBotUpdate: ({ botId = svc.bot.id, ...input }) => (open(), core.emitBotUpdate(botId, input)),
    setPlan: (plan, boardId = board.id) => core.setPlan(boardId, plan),
    webhook: ((owner: { boardId: string } | { botId: string }) =>
      'boardId' in owner ? core.view('board', owner.boardId) : core.view('bot', owner.botId)) as FakeSvc['webhook'],
    advance: async (ms) => {
      open();
      await clock.advance(ms);
      await engine.idle();
    },
    now: () => clock.now(),
    settled: () => engine.idle(),
    requests: () => [...traffic.requests],
    secretMatches: (owner, secret) =>
      'boardId' in owner ? core.secretMatches('board', owner.boardId, secret) : core.secretMatches('bot', owner.botId, secret),
    revokeToken: (token) => directory.revoke(token),
    injectApiFault: (fault) => faults.add(fault),
    setStateTimeFormat: (format) => {
      if (!Object.prototype.hasOwnProperty.call(STATE_TIME_FORMATS, format))
        throw new FakeSvcError('invalid_input', `the time format is one of ${Object.keys(STATE_TIME_FORMATS).join(', ')}`);
      core.timeFormat = format;
    },
    close: async () => {
      if (closed) return;
      closed = true;
      clock.stop();
      for (const res of faults.held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const answer = async (): Promise<void> => {
      const body = await readBody(req);
      if (await controlRoute(svc, req, res, body)) return;
      if ((req.url ?? '').startsWith('/api/')) await traffic.admit(req, res, body);
      if (await svcRoute(core, { req, res, body }, settings)) return;
      throw new ApiRefusal(404, 'not_found', 'no such route');
    };
    answer().catch((err: unknown) => sendRefusal(res, err));
  });
  const address = await listen(server, read.host, read.port);
  (svc as { baseUrl: string }).baseUrl = `http://${urlHost(address)}:${address.port}`;
  return svc;
}
