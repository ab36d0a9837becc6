/** The recipe as a Worker (ES module syntax), with every default; the secret is a binding, as in examples/runtimes/cloudflare-worker.ts. */
import * as api from '../../../src/web';
import { recipeApp } from '../recipe-app';

let app: ((request: Request) => Promise<Response>) | undefined;

export default {
  fetch(request: Request, env: { SVC_BOARD_WEBHOOK_SECRET: string }): Promise<Response> {
    app ??= recipeApp(api, env.SVC_BOARD_WEBHOOK_SECRET);
    return app(request);
  },
};
