import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeRuntime } from '../support/runtime-server';
import { CONTRACT_SECRET } from '../support/webhook-contract';

// workerd, the runtime Cloudflare Workers run on, as the npm package of its Linux x64 binary (the
// machines this project runs on); its version is the latest compatibility date it supports.
const WORKERD = require.resolve('@cloudflare/workerd-linux-64/bin/workerd');
const COMPATIBILITY_DATE = execFileSync(WORKERD, ['--version'], { encoding: 'utf8' }).trim().split(' ').pop()!;

/**
 * Node.js compatibility is on by default from compatibility date 2026-08-04: it is turned off here
 * (`no_nodejs_compat`), so the worker has no Node module and no Node global.
 */
function config(port: number): string {
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [ (name = "worker", esModule = embed "recipe.mjs") ],
  compatibilityDate = "${COMPATIBILITY_DATE}",
  compatibilityFlags = ["no_nodejs_compat", "no_nodejs_compat_v2"],
  bindings = [ (name = "SVC_BOARD_WEBHOOK_SECRET", text = "${CONTRACT_SECRET}") ],
);
`;
}

describeRuntime(`workerd ${COMPATIBILITY_DATE} without nodejs_compat`, {
  entry: 'workerd',
  build: 'web',
  format: 'esm',
  nodeGlobals: false,
  command(_bundle, port, dir) {
    writeFileSync(join(dir, 'config.capnp'), config(port));
    return { file: WORKERD, args: ['serve', join(dir, 'config.capnp')] };
  },
});
