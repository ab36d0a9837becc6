import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { LAUNCHER, expectOneLine, runCli, spawnCli, tempFiles } from './run-cli';

describe('svc-webhooks (top level)', () => {
  it('lists the commands for --help and exits 0', async () => {
    const result = await runCli(['--help']);
    expect(result.code).toBe(0);
    for (const name of ['send', 'verify', 'bot-webhook', 'board-webhook', 'postgres', 'version']) expect(result.stdout).toContain(`  ${name}`);
  });

  it('prints the overview to stderr and exits 2 without a command', async () => {
    const result = await runCli([]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Usage: svc-webhooks <command>');
  });

  it('exits 2 with one line for an unknown command', async () => {
    const result = await runCli(['sned']);
    expect(result.code).toBe(2);
    expectOneLine(result.stderr);
    expect(result.stderr).toContain('unknown command "sned"');
  });

  it('shows a command help with `help <command>`', async () => {
    const result = await runCli(['help', 'verify']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: svc-webhooks verify');
  });

  it('prints its own version for --version', async () => {
    const result = await runCli(['--version']);
    expect(result.stdout).toMatch(/^svc-webhooks \d+\.\d+\.\d+/);
  });

  it.each(['send', 'verify', 'bot-webhook', 'board-webhook', 'postgres', 'version'])('has --help for %s', async (name) => {
    const result = await runCli([name, '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Usage: svc-webhooks ${name}`);
    expect(result.stderr).toBe('');
  });
});

describe('bin/svc-webhooks.js', () => {
  it('runs the CLI from the TypeScript source through tsx', async () => {
    const result = await spawnCli(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: svc-webhooks <command>');
  });

  it('passes the exit code through', async () => {
    const result = await spawnCli(['no-such-command']);
    expect(result.code).toBe(2);
    expectOneLine(result.stderr);
  });

  it('runs dist/cli/main.js when the package is built', async () => {
    // A copy of the launcher in a fake package whose build only says where it ran.
    const pkg = tempFiles({});
    try {
      mkdirSync(join(pkg.dir, 'bin'));
      mkdirSync(join(pkg.dir, 'dist', 'cli'), { recursive: true });
      copyFileSync(LAUNCHER, join(pkg.dir, 'bin', 'svc-webhooks.js'));
      writeFileSync(join(pkg.dir, 'dist', 'cli', 'main.js'), "exports.run = () => { process.stdout.write('built'); process.exitCode = 3; };\n");
      const result = await new Promise<{ code: number | null; stdout: string }>((done) => {
        execFile(process.execPath, [join(pkg.dir, 'bin', 'svc-webhooks.js')], { env: { PATH: process.env.PATH ?? '' } }, (err, stdout) =>
          done({ code: err ? (err.code as number) : 0, stdout }),
        );
      });
      expect(result).toEqual({ code: 3, stdout: 'built' });
    } finally {
      pkg.cleanup();
    }
  });
});

describe('output', () => {
  it('never prints an svc token, whatever the command prints', async () => {
    const token = `svc_oa_${'s'.repeat(43)}`;
    const result = await runCli(['send', 'ping', '--url', `http://127.0.0.1:9/hook?access=${token}`, '--secret', '0123456789abcdef']);
    expect(result.stdout).toContain('access=svc_oa_ssssss…[redacted]');
    expect(result.stdout + result.stderr).not.toContain('s'.repeat(7));
  });
});
