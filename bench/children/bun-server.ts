/**
 * A server child under Bun: serves one Fetch stack with Bun.serve on 127.0.0.1 and measures itself
 * over the window the parent marks with `begin` and `end`, as children/server.ts does on node (CPU
 * time of the whole process, peak RSS). Bun has no V8 inspector: `profile` is not taken here.
 */
import { join } from 'node:path';
import { serveRequests } from '../ipc';
import { handledCount } from '../stacks/handler';
import { stack, type StackName } from '../stacks/index';

/** What this child uses of Bun's API (the bench type-checks without Bun's types). */
declare const Bun: {
  serve(options: { port: number; hostname: string; fetch(request: Request): Promise<Response> }): { port: number };
};

const info = stack(process.argv[2] as StackName);
const { createFetch } = require(join(__dirname, '..', 'stacks', info.module)) as { createFetch(): (request: Request) => Promise<Response> };
const fetch = createFetch();

let cpuStart = process.cpuUsage();
let handledStart = 0;

serveRequests({
  listen: () => ({ port: Bun.serve({ port: 0, hostname: '127.0.0.1', fetch }).port }),
  begin: () => {
    handledStart = handledCount();
    cpuStart = process.cpuUsage();
    return {};
  },
  end: () => {
    const cpu = process.cpuUsage(cpuStart);
    return { cpuMicros: cpu.user + cpu.system, handled: handledCount() - handledStart, maxRssKb: process.resourceUsage().maxRSS };
  },
});
