import type { IncomingMessage, ServerResponse } from 'node:http';
import type { VersionInfo } from '../../client/setup-types';
import type { ApiFaults } from './api-faults';
import type { Caller } from './directory';
import type { EmulatorCore } from './emulator-core';
import { ApiRefusal, jsonObject, sendJson } from './http-answer';

/** One request to svc's routes: what it is answered on, and its body, already read. */
export interface ApiCall {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly body: string;
}

/** What GET /api/version answers unless `versionInfo` says otherwise: a local build, as the spec words it. */
export const EMULATED_VERSION: Readonly<VersionInfo> = {
  version: 'dev',
  commit: 'unknown',
  license: 'AGPL-3.0-only',
  commercialLicense: 'https://svc.example.com/license',
  attribution: 'Powered by svc',
  url: 'https://svc.example.com',
  product: 'svc',
  planContact: 'sales@svc.example.com',
};

const BOARD_ROUTE = /^\/api\/boards\/([^/]+)\/webhook(\/ping)?$/;

function authenticated(core: EmulatorCore, req: IncomingMessage): Exclude<Caller, { kind: 'refused' }> {
  const caller = core.parts.directory.caller(req.headers.authorization);
  if (caller.kind === 'refused') throw new ApiRefusal(401, 'unauthorized', caller.reason);
  return caller;
}

function methodNotAllowed(allowed: string): never {
  throw new ApiRefusal(405, 'method_not_allowed', `this route takes ${allowed}`, { allow: allowed });
}

async function botRoute(core: EmulatorCore, { req, res, body }: ApiCall, settings: RouteSettings): Promise<void> {
  const caller = authenticated(core, req);
  if (caller.kind !== 'bot') throw new ApiRefusal(403, 'forbidden', "the bot webhook routes take the bot's own token");
  const wrapped = settings.botGetWrapped;
  const fault = settings.faults.take({ method: req.method ?? '' });
  if (fault !== undefined) return settings.faults.answer(res, fault, core.view('bot', caller.botId), (state) => (wrapped ? { webhook: state } : state));
  if (req.method === 'GET') {
    const view = core.view('bot', caller.botId);
    if (view === undefined) throw new ApiRefusal(404, 'not_found', 'the bot has no webhook');
    return sendJson(res, 200, wrapped ? { webhook: view } : view);
  }
  if (req.method === 'PUT') return sendJson(res, 200, { webhook: core.put('bot', caller.botId, jsonObject(body)).view });
  if (req.method === 'DELETE') {
    core.delete('bot', caller.botId);
    return sendJson(res, 204);
  }
  methodNotAllowed('GET, PUT, DELETE');
}

async function boardRoute(core: EmulatorCore, { req, res, body }: ApiCall, settings: RouteSettings, match: RegExpExecArray): Promise<void> {
  const caller = authenticated(core, req);
  let boardId: string;
  try {
    boardId = decodeURIComponent(match[1]!);
  } catch {
    throw new ApiRefusal(404, 'not_found', 'no such board');
  }
  const board = core.parts.directory.boards.get(boardId);
  if (board === undefined) throw new ApiRefusal(404, 'not_found', 'no such board');
  if (caller.kind !== 'person' || !caller.boards.has(boardId)) {
    throw new ApiRefusal(403, 'forbidden', 'board webhooks need MANAGE_BOARD on the board and MANAGE_INTEGRATIONS in the workspace');
  }
  const fault = settings.faults.take({ boardId, method: match[2] === undefined ? (req.method ?? '') : 'ping' });
  if (fault !== undefined) return settings.faults.answer(res, fault, core.view('board', boardId));
  const changes = req.method === 'PUT' || match[2] !== undefined;
  if (changes && board.plan !== 'business') throw new ApiRefusal(403, 'plan_required', 'board webhooks need the Business plan or above');
  if (match[2] !== undefined) {
    if (req.method !== 'POST') methodNotAllowed('POST');
    return sendJson(res, 200, await core.ping(boardId));
  }
  if (req.method === 'GET') {
    const view = core.view('board', boardId);
    if (view === undefined) throw new ApiRefusal(404, 'not_found', 'the board has no webhook');
    return sendJson(res, 200, view);
  }
  if (req.method === 'PUT') {
    const { view, generated } = core.put('board', boardId, jsonObject(body));
    return sendJson(res, 200, generated === undefined ? view : { ...view, secret: generated });
  }
  if (req.method === 'DELETE') {
    core.delete('board', boardId);
    return sendJson(res, 204);
  }
  methodNotAllowed('GET, PUT, DELETE');
}

/** How the routes answer where the spec leaves it open. */
export interface RouteSettings {
  /** Whether the bot GET wraps its state in `webhook` as PUT does. */
  readonly botGetWrapped: boolean;
  /** What GET /api/version answers. */
  readonly version: VersionInfo;
  /** Faults of the webhook routes a test injected. */
  readonly faults: ApiFaults;
}

/** svc's routes: GET /api/version and the bot and board webhook routes; false for any other path. */
export async function svcRoute(core: EmulatorCore, call: ApiCall, settings: RouteSettings): Promise<boolean> {
  const { req, res } = call;
  const path = (req.url ?? '/').split('?')[0]!;
  if (path === '/api/version') {
    if (req.method !== 'GET') methodNotAllowed('GET');
    sendJson(res, 200, settings.version);
    return true;
  }
  if (path === '/api/bots/me/webhook') {
    await botRoute(core, call, settings);
    return true;
  }
  const match = BOARD_ROUTE.exec(path);
  if (match === null) return false;
  await boardRoute(core, call, settings, match);
  return true;
}
