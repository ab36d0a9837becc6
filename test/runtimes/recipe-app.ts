/**
 * The Fetch recipe every runtime test serves, over whichever build the runtime gets (the Fetch
 * build on workerd and the Edge runtime, the Node build on Deno and Bun):
 * - POST /webhooks/board: `createWebHandler(svcBoardWebhook(...))`, counting the handler's runs;
 * - GET /handled: that count;
 * - POST /verify/board and /verify/bot: the standalone verifiers on the request's body and headers;
 * - GET /globals: which of Node's globals the runtime has.
 */
import type * as Api from '../../src/web';

/** Every default: `svcBoardWebhook(secret)` logs through the default logger into the memory store. */
export function recipeApp(api: typeof Api, secret: string): (request: Request) => Promise<Response> {
  let handled = 0;
  const webhook = api.svcBoardWebhook(secret).onAny(() => void handled++);
  const handle = api.createWebHandler(webhook);

  async function verified(request: Request, verify: (body: Uint8Array) => Promise<{ deliveryId: string }>): Promise<Response> {
    try {
      const { deliveryId } = await verify(new Uint8Array(await request.arrayBuffer()));
      return Response.json({ deliveryId });
    } catch (err) {
      if (!api.isSvcWebhookError(err)) throw err;
      return Response.json({ code: err.code }, { status: err.status });
    }
  }

  return async (request) => {
    const { pathname } = new URL(request.url);
    const g = globalThis as Record<string, unknown>;
    switch (pathname) {
      case '/handled':
        return new Response(String(handled));
      case '/globals':
        return Response.json({ process: typeof g.process, Buffer: typeof g.Buffer, require: typeof g.require });
      case '/verify/board':
        return verified(request, (body) => api.verifyBoardDelivery({ body, headers: request.headers, secret }));
      case '/verify/bot':
        return verified(request, (body) => api.verifyBotDelivery({ body, headers: request.headers, secret }));
      default:
        return handle(request);
    }
  };
}
