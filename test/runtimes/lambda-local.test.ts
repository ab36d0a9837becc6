/**
 * The Lambda recipe (examples/runtimes/aws-lambda.ts) as AWS runs it, locally: bundled with esbuild
 * (as the CDK's NodejsFunction and SAM bundle a function), then invoked by lambda-local in a
 * separate Node process. Each event is one of the shapes AWS documents.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { boardEvent, signBoardEvent } from '../../src/testing';
import { CONTRACT_SECRET } from '../support/contract-secret';
import { lambdaEvent } from '../support/lambda-events';

interface Run {
  readonly results: Array<{ statusCode: number; statusDescription?: string; body: string; isBase64Encoded: boolean; multiValueHeaders?: unknown }>;
  /** How many times the recipe's handler ran: it logs one line each time. */
  readonly handled: number;
  readonly output: string;
}

/**
 * Invokes `events` one after another in one lambda-local process, `warm` (one instance for all) or
 * `cold` (the module loaded afresh for each, as on a new instance); resolves when it has exited.
 */
function invoke(functionPath: string, mode: 'warm' | 'cold', events: readonly unknown[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(__dirname, 'lambda-local-driver.cjs'), functionPath, mode], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, SVC_BOARD_WEBHOOK_SECRET: CONTRACT_SECRET },
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(killer);
      const lines = output.split('\n');
      const results = lines.filter((line) => line.startsWith('result ')).map((line) => JSON.parse(line.slice('result '.length)) as Run['results'][number]);
      const handled = lines.filter((line) => line.includes('"msg":"task created"')).length;
      if (code !== 0 || results.length !== events.length) reject(new Error(`lambda-local exited with ${code}:\n${output}`));
      else resolve({ results, handled, output });
    });
    child.stdin.end(events.map((event) => `${JSON.stringify(event)}\n`).join(''));
  });
}

const codeOf = (result: { body: string }) => (JSON.parse(result.body) as { code?: string }).code;

describe('the Lambda recipe, bundled and run by lambda-local in its own process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-lambda-'));
  const functionPath = join(dir, 'function.js');
  let run: Run;
  const valid = signBoardEvent(boardEvent('task.created'), { secret: CONTRACT_SECRET });
  const forged = signBoardEvent(boardEvent('task.created'), { secret: 'not-the-webhook-secret-0123456789' });
  const oversized = signBoardEvent(boardEvent('task.created', { task: { description: 'x'.repeat(600 * 1024) } }), { secret: CONTRACT_SECRET });

  beforeAll(async () => {
    await build({
      entryPoints: [join(__dirname, '..', '..', 'examples', 'runtimes', 'aws-lambda.ts')],
      outfile: functionPath,
      bundle: true,
      format: 'cjs',
      platform: 'node',
      target: 'node20',
      // Optional peers of features the recipe does not use.
      external: ['bullmq', 'ioredis', 'pg'],
      logLevel: 'silent',
    });
    run = await invoke(functionPath, 'warm', [
      lambdaEvent('rest', valid),
      lambdaEvent('http', valid, { base64: true }),
      lambdaEvent('url', forged, { base64: true }),
      lambdaEvent('alb-multi', oversized, { base64: true }),
      lambdaEvent('alb', valid),
      { Records: [{ eventSource: 'aws:sqs', body: valid.body }] },
    ]);
  }, 60_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers a valid delivery from API Gateway (REST API) 200, and runs its handler', () => {
    expect([run.results[0]!.statusCode, JSON.parse(run.results[0]!.body), run.results[0]!.isBase64Encoded]).toEqual([200, { ok: true }, false]);
  });

  it('answers its repeat through an HTTP API (base64) and through an ALB as a duplicate: the handler ran once', () => {
    expect(JSON.parse(run.results[1]!.body)).toEqual({ ok: true, duplicate: true });
    expect([run.results[4]!.statusCode, run.results[4]!.statusDescription, JSON.parse(run.results[4]!.body)]).toEqual([
      200,
      '200 OK',
      { ok: true, duplicate: true },
    ]);
    expect(run.handled).toBe(1);
  });

  it('refuses a forged delivery through a Function URL 401 signature_mismatch', () => {
    expect([run.results[2]!.statusCode, codeOf(run.results[2]!)]).toEqual([401, 'signature_mismatch']);
  });

  it('refuses an oversized delivery through an ALB with multi-value headers 413, in multiValueHeaders', () => {
    expect([run.results[3]!.statusCode, run.results[3]!.statusDescription, codeOf(run.results[3]!)]).toEqual([413, '413 Content Too Large', 'body_too_large']);
    expect(run.results[3]!.multiValueHeaders).toEqual({ 'Content-Type': ['application/json; charset=utf-8'] });
  });

  it('answers a queue event 500 unsupported_event, and logs the shape it had without its secret', () => {
    expect([run.results[5]!.statusCode, codeOf(run.results[5]!)]).toEqual([500, 'unsupported_event']);
    expect(run.output).toMatch(/"code":"unsupported_event".*"shape":"an event with the fields Records"/);
    expect(run.output).not.toContain(CONTRACT_SECRET);
  });

  it('runs the handler again for a retry that lands on a new instance: the memory store is per instance', async () => {
    const cold = await invoke(functionPath, 'cold', [lambdaEvent('http', valid), lambdaEvent('http', valid)]);
    expect(cold.results.map((result) => JSON.parse(result.body) as unknown)).toEqual([{ ok: true }, { ok: true }]);
    expect(cold.handled).toBe(2);
  });
});
