import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FakeSvc } from './fake-svc-types';
import { FakeSvcError } from './emulator-error';
import { ApiRefusal, jsonObject, sendJson } from './http-answer';

/** The prefix of the emulator's own control routes, apart from svc's `/api`. */
export const CONTROL_PREFIX = '/_emulator';

/** The control routes, one line each, as `emulate` prints them. */
export const CONTROL_ROUTES: readonly string[] = [
  'GET  /_emulator                        boards, bots, clock',
  'POST /_emulator/boards                 {key?, name?} -> a board and the token of a person who manages it',
  'POST /_emulator/bots                   -> a bot and its bot token',
  'POST /_emulator/boards/{id}/events     {type, overrides?, by?} -> {id, sequence, queued}',
  'POST /_emulator/bots/{id}/updates      {kind, data?} -> {id, queued}',
  'PUT  /_emulator/boards/{id}/plan       {plan: "business" | "free"}',
  'POST /_emulator/advance                {ms} (manual clock only)',
  'GET  /_emulator/audit                  deliveries and attempts',
];

const STATUS_OF: Record<string, number> = { not_found: 404, clock_not_manual: 409, invalid_input: 400 };

function control(svc: FakeSvc, method: string, parts: readonly string[], body: Record<string, unknown>): Promise<unknown> | unknown {
  const [first, id, leaf] = parts;
  const route = `${method} ${first ?? ''}${id === undefined ? '' : '/:id'}${leaf === undefined ? '' : `/${leaf}`}`;
  switch (route) {
    case 'GET ':
      return { clock: svc.manualClock ? 'manual' : 'real', now: new Date(svc.now()).toISOString(), boards: svc.boards(), bots: svc.bots() };
    case 'POST boards': {
      const board = svc.addBoard({ ...(typeof body.key === 'string' ? { key: body.key } : {}), ...(typeof body.name === 'string' ? { name: body.name } : {}) });
      return { board, personToken: svc.addPerson([board.id]).token };
    }
    case 'POST bots':
      return svc.addBot();
    case 'POST boards/:id/events':
      return svc.emitBoardEvent({ ...(body as object), boardId: id } as Parameters<FakeSvc['emitBoardEvent']>[0]);
    case 'POST bots/:id/updates':
      return svc.emitBotUpdate({ ...(body as object), botId: id } as Parameters<FakeSvc['emitBotUpdate']>[0]);
    case 'PUT boards/:id/plan':
      svc.setPlan(body.plan as 'business', id);
      return { plan: body.plan };
    case 'POST advance':
      if (typeof body.ms !== 'number') throw new FakeSvcError('invalid_input', 'ms is a number of milliseconds');
      return svc.advance(body.ms).then(() => ({ now: new Date(svc.now()).toISOString() }));
    case 'GET audit':
      return { deliveries: svc.audit.deliveries(), attempts: svc.audit.attempts() };
    default:
      throw new ApiRefusal(404, 'not_found', 'no such control route');
  }
}

/** The control routes under `/_emulator`; false for any other path. */
export async function controlRoute(svc: FakeSvc, req: IncomingMessage, res: ServerResponse, text: string): Promise<boolean> {
  const path = (req.url ?? '/').split('?')[0]!;
  if (path !== CONTROL_PREFIX && !path.startsWith(`${CONTROL_PREFIX}/`)) return false;
  try {
    const parts = path
      .slice(CONTROL_PREFIX.length + 1)
      .split('/')
      .filter((p) => p !== '')
      .map(decodeURIComponent);
    const body = req.method === 'GET' ? {} : jsonObject(text);
    const answer = await control(svc, req.method ?? 'GET', parts, body);
    sendJson(res, req.method === 'POST' && parts[0] !== 'advance' ? 201 : 200, answer);
  } catch (err) {
    if (err instanceof URIError) throw new ApiRefusal(404, 'not_found', 'no such control route');
    // The test kit refuses a bad override (a `__proto__` key) with a TypeError: the caller's input, not a fault.
    if (err instanceof TypeError) throw new ApiRefusal(400, 'invalid_input', 'the event overrides were refused');
    if (!(err instanceof FakeSvcError)) throw err;
    sendJson(res, STATUS_OF[err.code] ?? 400, { code: err.code, message: err.message });
  }
  return true;
}
