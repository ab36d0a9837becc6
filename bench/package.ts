/**
 * The package as a new user gets it: `npm pack` (which builds dist/), then a fresh project per
 * package that installs it alone, the packed svc-webhooks beside @octokit/webhooks and
 * standardwebhooks at the versions of this repository's lock. Each install's size is what
 * node_modules holds: its packages and the bytes of their files.
 */
import { spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './paths';

/**
 * Outside the repository, so that a package missing from an install is not found in the
 * repository's node_modules further up (@opentelemetry/api, say, which the default install lacks).
 */
export const PACKAGE_DIR = join(tmpdir(), 'svc-webhooks-bench-package');

export type Subject = 'svc-webhooks' | '@octokit/webhooks' | 'standardwebhooks';
export const SUBJECTS: readonly Subject[] = ['svc-webhooks', '@octokit/webhooks', 'standardwebhooks'];

export interface InstallSize {
  readonly subject: Subject;
  readonly version: string;
  /** Packages in node_modules, the subject included. */
  readonly packages: number;
  /** Bytes of every file in node_modules. */
  readonly bytes: number;
}

export interface Installs {
  /** The project that installed each subject: run `node` there to load it as its user would. */
  readonly dirs: Record<Subject, string>;
  readonly sizes: readonly InstallSize[];
}

function npm(args: string[], cwd: string): string {
  const out = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  if (out.status !== 0) throw new Error(`bench: npm ${args.join(' ')} failed in ${cwd}:\n${out.stdout}${out.stderr}`);
  return out.stdout;
}

function lockedVersion(name: string): string {
  return (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}

/** Packages (directories with a package.json directly under some node_modules) and file bytes. */
export function measureNodeModules(dir: string): { packages: number; bytes: number } {
  let packages = 0;
  let bytes = 0;
  const walk = (path: string, parentIsNodeModules: boolean, scoped: boolean): void => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const child = join(path, entry.name);
      if (entry.isDirectory()) {
        const isPackage = (parentIsNodeModules && !entry.name.startsWith('@') && !entry.name.startsWith('.')) || scoped;
        if (isPackage) packages++;
        walk(child, entry.name === 'node_modules', parentIsNodeModules && entry.name.startsWith('@'));
      } else {
        bytes += lstatSync(child).size;
      }
    }
  };
  walk(join(dir, 'node_modules'), true, false);
  return { packages, bytes };
}

/** Packs svc-webhooks and installs it and its peers, each in a fresh project under .bench/package/. */
export function preparePackages(): Installs {
  rmSync(PACKAGE_DIR, { recursive: true, force: true });
  mkdirSync(PACKAGE_DIR, { recursive: true });
  const [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', PACKAGE_DIR, '--loglevel=error'], ROOT)) as Array<{
    filename: string;
    version: string;
  }>;
  const specs: Record<Subject, { spec: string; version: string }> = {
    'svc-webhooks': { spec: join(PACKAGE_DIR, packed!.filename), version: packed!.version },
    '@octokit/webhooks': { spec: `@octokit/webhooks@${lockedVersion('@octokit/webhooks')}`, version: lockedVersion('@octokit/webhooks') },
    standardwebhooks: { spec: `standardwebhooks@${lockedVersion('standardwebhooks')}`, version: lockedVersion('standardwebhooks') },
  };
  const dirs = {} as Record<Subject, string>;
  const sizes: InstallSize[] = [];
  for (const subject of SUBJECTS) {
    const dir = join(PACKAGE_DIR, subject.replace(/[@/]/g, '_'));
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: `bench-install-${subject.replace(/[@/]/g, '')}`, version: '1.0.0', private: true })}\n`);
    npm(['install', specs[subject].spec, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], dir);
    dirs[subject] = dir;
    sizes.push({ subject, version: specs[subject].version, ...measureNodeModules(dir) });
  }
  return { dirs, sizes };
}
