/** The recipe as a Worker (ES module syntax); the secret is a binding, as in examples/runtimes/cloudflare-worker.ts. */
import * as api from '../../../src/web';
import { consoleLogger } from '../console-logger';
import { recipeApp } from '../recipe-app';

let app: ((request: Request) => Promise<Response>) | undefined;

export default {
  fetch(request: Request, env: { SVC_BOARD_WEBHOOK_SECRET: string }): Promise<Response> {
    // The default logger (pino on stdout) cannot run without Node's modules yet.
    app ??= recipeApp(api, { secret: env.SVC_BOARD_WEBHOOK_SECRET, logger: consoleLogger() });
    return app(request);
  },
};
