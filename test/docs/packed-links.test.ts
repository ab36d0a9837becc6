import { execFileSync } from 'node:child_process';
import { dirname, join, normalize, relative } from 'node:path';
import { links, root } from './markdown';

/**
 * The files `npm pack` puts in the tarball (listed without building: the links are what is checked).
 * npm's page of the package and a copy in node_modules show README.md with its links relative to it.
 */
function packedFiles(): Set<string> {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, npm_config_loglevel: 'silent' },
  });
  const [packed] = JSON.parse(out) as Array<{ files: Array<{ path: string }> }>;
  return new Set(packed!.files.map((f) => f.path));
}

describe('the documentation as the package ships it', () => {
  const files = packedFiles();
  const shipped = (path: string): boolean => files.has(path) || [...files].some((f) => f.startsWith(`${path.replace(/\/$/, '')}/`));
  const pages = [...files].filter((f) => f.endsWith('.md'));

  it('ships README.md, docs/, CHANGELOG.md and the pages the README links to', () => {
    expect(pages).toEqual(expect.arrayContaining(['README.md', 'CHANGELOG.md', 'docs/errors.md', 'docs/testing.md', 'ARCHITECTURE.md', 'CONTRIBUTING.md']));
  });

  it('every relative link of a shipped page points at a shipped file', () => {
    const broken = pages.flatMap((page) =>
      links(page)
        .filter((l) => !/^[a-z][a-z0-9+.-]*:/i.test(l.target) && !l.target.startsWith('#'))
        .map((l) => ({
          l,
          path: relative(root, normalize(join(root, dirname(page), decodeURIComponent(l.target.split('#')[0]!))))
            .split('\\')
            .join('/'),
        }))
        .filter(({ path }) => !shipped(path))
        .map(({ l, path }) => `${page}:${l.line}: ${path}`),
    );
    expect(broken).toEqual([]);
  });
});
