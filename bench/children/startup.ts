/**
 * The startup child: loads one stack from nothing and serves it, noting when each step finished in
 * ms since the process started (performance.now() counts from process start). The prober measures
 * the whole: from spawn() to its first 2xx answer. Nothing is imported above the first mark.
 */
const marks: Record<string, number> = { entry: performance.now() };
const [moduleName, arg, port] = process.argv.slice(2) as [string, string, string];

// Express is required alone first, so its own load time shows apart from the stack's.
if (moduleName.includes('express')) {
  require('express');
  marks.express = performance.now();
}
const { createServer } = require('node:http') as typeof import('node:http');
const { createListener } = require(`../stacks/${moduleName}`) as { createListener(arg?: string): import('node:http').RequestListener };
marks.loaded = performance.now();
const listener = createListener(arg === '-' ? undefined : arg);
marks.created = performance.now();

let answered = false;
const server = createServer((req, res) => {
  if (!answered) {
    res.once('finish', () => {
      if (answered || res.statusCode < 200 || res.statusCode > 299) return;
      answered = true;
      marks.firstResponse = performance.now();
      process.stderr.write(`BENCH ${JSON.stringify(marks)}\n`);
    });
  }
  listener(req, res);
});
server.listen(Number(port), '127.0.0.1', () => {
  marks.listening = performance.now();
  // Tells the prober to send its delivery now: polling would take CPU from this process's start.
  process.stderr.write('LISTENING\n');
});

export {};
