// For `npm run test:package`: what the default setup loads, in a consumer project that installed the
// packed tarball. A script (CommonJS or ESM) serves one signed delivery with one board webhook, the
// memory store and the default logger, and reports the files loaded by then (and whether the import
// loaded node:crypto, or the setup pino or undici); then it uses an optional part (the Redis store)
// and reports whether that loaded it and whether `instanceof` and `extends` work on its class.
// check() turns the report into failures.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const SECRET = 'consumer-default-setup-0123456789';

const PRELUDE = {
  cjs: `const { readFileSync, writeFileSync } = require('node:fs');
const { createServer } = require('node:http');
const api = require('svc-webhooks');
const cache = require.cache;
const cjs = api;
const builtinsAtImport = process.moduleLoadList.slice();
`,
  esm: `import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import * as api from 'svc-webhooks';
const cache = createRequire(import.meta.url).cache;
const cjs = createRequire(import.meta.url)('svc-webhooks');
const builtinsAtImport = process.moduleLoadList.slice();
`,
};

const BODY = `
const delivery = JSON.parse(readFileSync('delivery.json', 'utf8'));
const server = createServer(api.createNodeHandler(api.svcBoardWebhook({ secret: ${JSON.stringify(SECRET)} }).on('ping', () => undefined)));
const loadedAtSetup = Object.keys(cache);
const builtinsAtSetup = process.moduleLoadList.slice();
server.listen(0, '127.0.0.1', async () => {
  const res = await fetch(\`http://127.0.0.1:\${server.address().port}/webhooks/board\`, { method: 'POST', headers: delivery.headers, body: delivery.body });
  await res.arrayBuffer();
  const loaded = Object.keys(cache);
  const client = { call: async () => 'OK' };
  const store = api.redisStore({ client });
  class Subclass extends api.RedisStore {}
  writeFileSync('report.json', JSON.stringify({
    status: res.status,
    loaded,
    // Node's own modules as Node 20 names them: node:crypto, and undici behind Node's fetch.
    cryptoAtImport: builtinsAtImport.includes('NativeModule crypto'),
    undiciAtSetup: builtinsAtSetup.some((name) => name.includes('undici')),
    pinoAtSetup: loadedAtSetup.some((file) => file.includes('node_modules/pino/')),
    loadedAfterStore: Object.keys(cache),
    isInstance: store instanceof api.RedisStore && store instanceof cjs.RedisStore,
    subclassIsInstance: new Subclass({ client }) instanceof api.RedisStore,
    sameErrorClass: api.SvcWebhookError === cjs.SvcWebhookError,
  }));
  server.close();
  process.exit(0);
});
`;

/** The script's file name and text, and the command that writes the signed delivery it reads. */
export function defaultSetupScript(kind) {
  return {
    file: kind === 'esm' ? 'default-setup.mjs' : 'default-setup.cjs',
    text: PRELUDE[kind] + BODY,
    sign: `const t = require('svc-webhooks/testing'); const s = t.signBoardEvent(t.boardEvent('ping'), { secret: ${JSON.stringify(SECRET)} }); require('node:fs').writeFileSync('delivery.json', JSON.stringify(s));`,
  };
}

/** The package a loaded file belongs to, or undefined for node's own modules. */
function packageOf(file) {
  const at = file.lastIndexOf('node_modules/');
  if (at === -1) return undefined;
  const [first, second] = file.slice(at + 'node_modules/'.length).split('/');
  return first.startsWith('@') ? `${first}/${second}` : first;
}

/** The problems of a report written by the script in `dir`; empty when the default setup loaded only what runs. */
export function check(dir, kind) {
  const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8'));
  const problems = [];
  if (report.status !== 200) problems.push(`the delivery was answered ${report.status}`);
  const ours = (files) =>
    files
      .filter((f) => packageOf(f) === 'svc-webhooks')
      .map((f) => f.slice(f.lastIndexOf('svc-webhooks/') + 'svc-webhooks/'.length))
      .sort();
  const expected = ['dist/generated/validators.js', 'dist/index.js', ...(kind === 'esm' ? ['dist/index.require.cjs'] : [])].sort();
  const loaded = ours(report.loaded);
  if (JSON.stringify(loaded) !== JSON.stringify(expected))
    problems.push(`the default setup loaded ${loaded.join(', ')} of the package (want ${expected.join(', ')})`);
  const packages = new Set(report.loaded.map(packageOf).filter((p) => p !== undefined && p !== 'svc-webhooks'));
  const { dependencies } = JSON.parse(readFileSync(join(dir, 'node_modules', 'svc-webhooks', 'package.json'), 'utf8'));
  const unused = Object.keys(dependencies).filter((name) => !packages.has(name));
  if (unused.length > 0) problems.push(`runtime dependencies the default setup never loaded: ${unused.join(', ')}`);
  // Loads that would delay a server's start or its first answer (docs/package.md).
  if (report.cryptoAtImport) problems.push('importing the package loaded node:crypto (the first webhook should)');
  if (report.pinoAtSetup) problems.push('setting up a webhook loaded pino (the default logger loads it after its first line)');
  if (report.undiciAtSetup) problems.push("setting up a webhook loaded undici (Node's fetch)");
  if (!ours(report.loadedAfterStore).includes('dist/dedup/redis-store.js')) problems.push('redisStore() did not load dist/dedup/redis-store.js');
  if (!report.isInstance) problems.push('a Redis store is not an instance of RedisStore (of this entry and of the CommonJS one)');
  if (!report.subclassIsInstance) problems.push('a subclass of RedisStore does not make instances of RedisStore');
  if (!report.sameErrorClass) problems.push('import and require give two SvcWebhookError classes');
  return problems;
}
