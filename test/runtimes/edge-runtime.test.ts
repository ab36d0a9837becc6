import { join } from 'node:path';
import { describeRuntime } from '../support/runtime-server';

// Vercel's Edge runtime (what Vercel Edge Functions and Next.js edge routes run on), as its npm package.
const VERSION = (require('edge-runtime/package.json') as { version: string }).version;

describeRuntime(`Vercel's Edge runtime (edge-runtime ${VERSION})`, {
  entry: 'edge-runtime',
  build: 'web',
  format: 'iife',
  nodeGlobals: false,
  command: (bundle, port) => ({ file: process.execPath, args: [join(__dirname, 'serve-edge-runtime.cjs'), bundle, String(port)] }),
});
