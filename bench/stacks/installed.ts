import { createRequire } from 'node:module';
import { join } from 'node:path';
import type * as Api from '../../src';

/**
 * svc-webhooks as its users load it: the package packed and installed by the bench
 * (bench/package.ts), whose project is in SVC_BENCH_PACKAGE_PROJECT, not the compiled sources the
 * other stacks run.
 */
export function installedSvcWebhooks(): typeof Api {
  const project = process.env.SVC_BENCH_PACKAGE_PROJECT;
  if (project === undefined) throw new Error('bench: SVC_BENCH_PACKAGE_PROJECT is not set (the bench sets it after installing the package)');
  return createRequire(join(project, 'package.json'))('svc-webhooks') as typeof Api;
}
