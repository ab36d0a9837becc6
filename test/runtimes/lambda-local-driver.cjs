// Runs a bundled Lambda function with lambda-local: `node lambda-local-driver.cjs <function.js> <warm|cold>`.
// Warm: the function's module is loaded once and every event goes to it, as to one instance of a
// function. Cold: lambda-local loads the module afresh for each event, as if each landed on a new
// instance. One event per line on stdin; one `result <json>` line per event on stdout (the function
// logs there too).
'use strict';
const { createInterface } = require('node:readline');
const lambdaLocal = require('lambda-local');

const [lambdaPath, mode] = process.argv.slice(2);

async function main() {
  const where = mode === 'warm' ? { lambdaFunc: require(lambdaPath) } : { lambdaPath };
  for await (const line of createInterface({ input: process.stdin })) {
    const result = await lambdaLocal.execute({ ...where, event: JSON.parse(line), lambdaHandler: 'handler', timeoutMs: 10_000, verboseLevel: 0 });
    process.stdout.write(`result ${JSON.stringify(result)}\n`);
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 1;
});
