/**
 * A server child: runs one stack on 127.0.0.1 and measures itself over the window the parent marks
 * with `begin` and `end` — CPU time of the whole process (every thread, GC included), peak RSS, and
 * on request a CPU profile of exactly that window.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type RequestListener } from 'node:http';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { serveRequests, type Message } from '../ipc';
import { PROFILE_DIR } from '../paths';
import { handledCount } from '../stacks/handler';
import { stack, type StackName } from '../stacks/index';

const info = stack(process.argv[2] as StackName);
// Only this stack's module is loaded: the others' dependencies stay out of this process.
const { createListener } = require(join(__dirname, '..', 'stacks', info.module)) as { createListener(arg?: string): RequestListener };
const server = createServer(createListener(info.arg));

let cpuStart = process.cpuUsage();
let handledStart = 0;
let session: Session | undefined;

async function startProfiler(): Promise<void> {
  session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  // 250 µs samples: enough resolution for requests that take tens of microseconds.
  await session.post('Profiler.setSamplingInterval', { interval: 250 });
  await session.post('Profiler.start');
}

async function stopProfiler(name: string): Promise<string> {
  const { profile } = await session!.post('Profiler.stop');
  session!.disconnect();
  mkdirSync(PROFILE_DIR, { recursive: true });
  const file = join(PROFILE_DIR, `${name}.cpuprofile`);
  writeFileSync(file, JSON.stringify(profile));
  return file;
}

serveRequests({
  listen: () =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        resolve({ port: typeof address === 'object' && address !== null ? address.port : 0 });
      });
    }),
  begin: async (message: Message) => {
    if (message.profile === true) await startProfiler();
    handledStart = handledCount();
    cpuStart = process.cpuUsage();
    return {};
  },
  end: async (message: Message) => {
    const cpu = process.cpuUsage(cpuStart);
    const handled = handledCount() - handledStart;
    const profile = session === undefined ? undefined : await stopProfiler(String(message.profileName ?? info.name));
    return { cpuMicros: cpu.user + cpu.system, handled, maxRssKb: process.resourceUsage().maxRSS, profile };
  },
});
