/**
 * A Worker whose webhook de-duplicates on Durable Objects: it exports `SvcDedupObject` and binds its
 * namespace as `SVC_DEDUP`, as docs/frameworks.md shows. `/handled` says how many deliveries this
 * isolate's handlers ran.
 */
import * as api from '../../../src/web';
import { CONTRACT_SECRET } from '../../support/contract-secret';

export { SvcDedupObject } from '../../../src/web';

interface Env {
  readonly SVC_DEDUP: api.DedupObjectNamespace;
}

let handled = 0;
let handle: api.WebHandler | undefined;

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    if (new URL(request.url).pathname === '/handled') return Promise.resolve(new Response(String(handled)));
    handle ??= api.createWebHandler(
      api.svcBoardWebhook({ secret: CONTRACT_SECRET, store: api.durableObjectStore(env.SVC_DEDUP, { shards: 4, commandTimeoutMs: 5_000 }) }).onAny(async () => {
        handled++;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }),
    );
    return handle(request);
  },
};
