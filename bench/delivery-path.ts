/**
 * The path of one delivery through svc-webhooks: which files of src/ and which of their functions
 * run while the default Express mount handles one 2 KB board delivery, counted with V8's precise
 * coverage (function granularity) over that one request, after a first delivery has loaded every
 * module. It runs on src/ compiled to plain JavaScript (.bench/js, as the bench's children), so a
 * loader's own wrappers count as no function of src/.
 * `npx tsx bench/delivery-path.ts [--list]`; `npm run bench` reports the same figures.
 */
import express from 'express';
import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { spawnSync } from 'node:child_process';
import { compileForChildren } from './compile';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { childScript, WORK_DIR } from './paths';
import { svcBoardWebhook } from '../src';
import { bodyTemplate } from './bodies';
import { deliveries, SVC_SECRET } from './signing';

/** The bound: a reader follows one delivery through at most this many files of src/. */
export const MAX_PATH_FILES = 20;

export interface DeliveryPath {
  /** Files of src/ with at least one function run, and how many functions ran in each. */
  readonly files: ReadonlyArray<{ readonly file: string; readonly functions: number; readonly names: readonly string[] }>;
  readonly functionCount: number;
}

function post(server: Server, delivery: { headers: Record<string, string>; body: Buffer }): Promise<number> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/webhooks/board', headers: delivery.headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(delivery.body);
  });
}

/** Measures the path in this process: the modules are the TypeScript sources, as tsx loads them. */
export async function measureDeliveryPath(): Promise<DeliveryPath> {
  const app = express();
  // Every default, the logger included (its line goes to the child's stdout, which is ignored).
  app.use(svcBoardWebhook(SVC_SECRET).on('task.updated', () => {}));
  const server = createServer(app).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const next = deliveries('svc-board', bodyTemplate('board', '2kb'));
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
    if ((await post(server, next())) !== 200) throw new Error('delivery-path: the warm-up delivery was not answered 200');
    await session.post('Profiler.takePreciseCoverage'); // resets the counts
    const status = await post(server, next());
    if (status !== 200) throw new Error(`delivery-path: the measured delivery was answered ${status}`);
    const { result } = await session.post('Profiler.takePreciseCoverage');
    const files = result
      .filter((script) => /\/src\/.*\.js$/.test(script.url) && !script.url.includes('/node_modules/'))
      .map((script) => ({
        file: script.url.replace(/^.*?\/src\//, 'src/').replace(/\.js$/, '.ts'),
        names: script.functions.filter((f) => f.ranges[0]!.startOffset !== 0 && f.ranges[0]!.count > 0).map((f) => f.functionName || '(anonymous)'),
      }))
      .map(({ file, names }) => ({ file, functions: names.length, names }))
      .filter((entry) => entry.functions > 0)
      .sort((a, b) => a.file.localeCompare(b.file));
    return { files, functionCount: files.reduce((sum, f) => sum + f.functions, 0) };
  } finally {
    session.disconnect();
    server.close();
  }
}

/** Measures the path in a plain node child, on src/ as compiled for the children (`compile`: compile it first). */
export function deliveryPathOfCompiled(compile: boolean): DeliveryPath {
  if (compile) compileForChildren();
  // The webhook's log line goes to the child's stdout, ignored here; the figures come back in a file.
  const out = join(WORK_DIR, 'delivery-path.json');
  const child = spawnSync(process.execPath, [childScript('delivery-path'), '--out', out], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (child.status !== 0) throw new Error(`delivery-path: the child exited with ${child.status}`);
  return JSON.parse(readFileSync(out, 'utf8')) as DeliveryPath;
}

if (require.main === module && process.argv.includes('--out')) {
  void measureDeliveryPath().then((path) => {
    writeFileSync(process.argv[process.argv.indexOf('--out') + 1]!, JSON.stringify(path));
    process.exit(0);
  });
} else if (require.main === module) {
  void Promise.resolve(deliveryPathOfCompiled(true)).then((path) => {
    process.stdout.write(`one board delivery passes ${path.files.length} files and ${path.functionCount} functions of src/\n`);
    if (process.argv.includes('--list'))
      for (const f of path.files) process.stdout.write(`  ${String(f.functions).padStart(3)}  ${f.file}  ${f.names.join(', ')}\n`);
    process.exit(0);
  });
}
