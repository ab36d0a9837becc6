/**
 * Where the bench reads and writes. Found by walking up to package.json, because the same module
 * runs from bench/ (under tsx, in the parent) and from .bench/js/bench/ (compiled, in the children).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

function projectRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error('bench: package.json not found above ' + from);
  }
}

export const ROOT = projectRoot(__dirname);
/** Build output, profiles and scratch files; ignored by git. */
export const WORK_DIR = join(ROOT, '.bench');
/** src/ and bench/ compiled to plain CommonJS, which the child processes run. */
export const JS_DIR = join(WORK_DIR, 'js');
export const PROFILE_DIR = join(WORK_DIR, 'profiles');
export const REPORT_FILE = join(ROOT, 'BENCHMARKS.md');

/** The compiled path of a bench module, e.g. childScript('children/server'). */
export function childScript(module: string): string {
  return join(JS_DIR, 'bench', `${module}.js`);
}
