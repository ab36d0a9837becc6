// Serves a bundled Edge function in Vercel's Edge runtime (the edge-runtime package) on 127.0.0.1:
// `node serve-edge-runtime.cjs <bundle.js> <port>`. Stopped by its pid.
'use strict';
const { readFileSync } = require('node:fs');
const { EdgeRuntime, runServer } = require('edge-runtime');

const [bundle, port] = process.argv.slice(2);
const runtime = new EdgeRuntime({ initialCode: readFileSync(bundle, 'utf8') });
runServer({ runtime, port: Number(port), host: '127.0.0.1' }).then(
  (server) => console.log(`edge-runtime listening on ${server.url}`),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
