import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { readRawBody } from '../../capture/read-raw-body';
import type { Outcome } from '../../receive/receiver';
import type { RequestAccess } from '../../internal/request/request-access';

type ExpressRequest = IncomingMessage & { originalUrl?: string };

/** How the pipeline reads a Node request, under Express or plain node:http. */
export const NODE_REQUEST: RequestAccess<IncomingMessage> = {
  facts: (req) => req,
  url: (req) => req.url ?? '',
  readBody: readRawBody,
  complete: (req) => req.complete,
  nodeRequest: (req) => req,
  fetchRequest,
};

/** A Fetch view of a Node request, for framework-neutral handler code: method, URL and headers. */
function fetchRequest(req: IncomingMessage): Request {
  const headers = new Headers();
  const raw = req.rawHeaders;
  // HTTP/2 pseudo-headers (`:path`) are no header names to Fetch; the URL and method carry them.
  for (let i = 0; i + 1 < raw.length; i += 2) if (!raw[i]!.startsWith(':')) headers.append(raw[i]!, raw[i + 1]!);
  const scheme = (req.socket as TLSSocket | null)?.encrypted === true ? 'https' : 'http';
  const path = (req as ExpressRequest).originalUrl ?? req.url ?? '/';
  let url: URL;
  try {
    url = new URL(path, `${scheme}://${req.headers.host ?? req.headers[':authority'] ?? 'localhost'}`);
  } catch {
    url = new URL(path.startsWith('/') ? path : '/', `${scheme}://localhost`);
  }
  return new Request(url, { method: req.method ?? 'POST', headers });
}

/**
 * Writes an Outcome, unless something already answered. The headers go in one writeHead() call:
 * on a response with no headers set yet (node:http) node then skips its per-header bookkeeping.
 */
export function sendOutcome(res: ServerResponse, outcome: Outcome): void {
  if (res.headersSent) return;
  const headers = ['Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(Buffer.byteLength(outcome.body))];
  if (outcome.retryAfter !== undefined) headers.push('Retry-After', String(outcome.retryAfter));
  if (outcome.closeConnection) headers.push('Connection', 'close');
  res.writeHead(outcome.status, headers);
  res.end(outcome.body);
}
