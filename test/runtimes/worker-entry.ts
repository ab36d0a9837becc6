/**
 * The Workers recipe's webhook, with a count of handled deliveries at GET /handled for the test
 * to read. Bundled with esbuild and run in workerd by workers.test.ts.
 */
import { createWebHandler, type WebHandler } from '../../src';
import { boardWebhook, type Env } from '../../examples/runtimes/cloudflare-worker';

let handled = 0;
let handle: WebHandler | undefined;

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    if (new URL(request.url).pathname === '/handled') return Promise.resolve(new Response(String(handled)));
    handle ??= createWebHandler(boardWebhook(env).onAny(() => void handled++));
    return handle(request);
  },
};
