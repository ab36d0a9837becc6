import { readWebBody } from '../../capture/read-web-body';
import type { RequestAccess } from '../../internal/request/request-access';

/** How the pipeline reads a Fetch `Request`, on any runtime that has one. */
export const WEB_REQUEST: RequestAccess<Request> = {
  // The one object made per Fetch request: its headers and path, as the protocols read them.
  facts: (request) => ({ headers: request.headers, url: pathAndQuery(request) }),
  url: pathAndQuery,
  readBody: readWebBody,
  // Unread body bytes are cancelled by the adapter; a Fetch response cannot ask to close the connection.
  complete: (request) => request.body === null || request.bodyUsed,
  // A Fetch request has no Node request behind it: ctx.req is absent, ctx.request is the Request.
  nodeRequest: () => undefined,
  fetchRequest: (request) => request,
};

function pathAndQuery(request: Request): string {
  const url = request.url;
  const scheme = url.indexOf('://');
  const path = scheme === -1 ? -1 : url.indexOf('/', scheme + 3);
  return path === -1 ? url : url.slice(path);
}
