import { existsSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { codePaths, documentationFiles, headings, links, root, type Link } from './markdown';

/**
 * Pages other engineers write. Until one exists a link to it is accepted (without an anchor into
 * it); once it exists, links to it and into its headings are checked like any other.
 */
const WRITTEN_ELSEWHERE = ['docs/options.md', 'docs/security.md', 'docs/never-silently-disabled.md', 'docs/redis-cluster.md'];

const files = documentationFiles();
const relativeLinks = files.flatMap(links).filter((l) => !/^[a-z][a-z0-9+.-]*:/i.test(l.target));

function resolveTarget(link: Link): { path: string; anchor: string | undefined } {
  const [path = '', anchor] = link.target.split('#', 2);
  const file = path === '' ? link.file : relative(root, normalize(join(root, dirname(link.file), decodeURIComponent(path))));
  return { path: file.split('\\').join('/'), anchor: anchor === undefined ? undefined : decodeURIComponent(anchor) };
}

/** Why a link does not resolve, or undefined when it does. */
function problem(link: Link): string | undefined {
  const { path, anchor } = resolveTarget(link);
  if (path.startsWith('..')) return `${link.target} leaves the repository`;
  if (!existsSync(join(root, path))) return WRITTEN_ELSEWHERE.includes(path) && anchor === undefined ? undefined : `${path} does not exist`;
  if (anchor === undefined) return undefined;
  if (!path.endsWith('.md') || statSync(join(root, path)).isDirectory()) return `#${anchor} points into ${path}, which has no headings`;
  return headings(path).some((h) => h.anchor === anchor) ? undefined : `${path} has no heading #${anchor}`;
}

describe('relative links in README.md, CONTRIBUTING.md, ARCHITECTURE.md and docs/', () => {
  it('are there to check', () => {
    expect(relativeLinks.length).toBeGreaterThan(100);
  });

  it.each(files)('%s: every relative link and #anchor resolves', (file) => {
    const broken = relativeLinks
      .filter((l) => l.file === file)
      .flatMap((l) => {
        const why = problem(l);
        return why === undefined ? [] : [`${l.file}:${l.line}: ${why}`];
      });
    expect(broken).toEqual([]);
  });
});

/** Its figures name the files of the mutation run they come from, some of which have moved since. */
const RECORDS_OF_PAST_RUNS = ['docs/development/mutation-testing.md'];

describe('repository paths named in README.md, CONTRIBUTING.md, ARCHITECTURE.md and docs/', () => {
  it.each(files.filter((f) => !RECORDS_OF_PAST_RUNS.includes(f)))('%s: every `src/…`, `test/…`, `examples/…` path it names exists', (file) => {
    const missing = codePaths(file)
      .filter((p) => !existsSync(join(root, p.target)) && !WRITTEN_ELSEWHERE.includes(p.target))
      .map((p) => `${p.file}:${p.line}: ${p.target}`);
    expect(missing).toEqual([]);
  });
});

describe('the link check itself', () => {
  const at = (target: string): Link => ({ file: 'docs/handlers.md', line: 1, target });

  it('finds a missing page, a missing heading and an anchor into a page without headings', () => {
    expect(problem(at('no-such-page.md'))).toBe('docs/no-such-page.md does not exist');
    expect(problem(at('errors.md#no_such_code'))).toBe('docs/errors.md has no heading #no_such_code');
    expect(problem(at('#registering-handlers'))).toBeUndefined();
    expect(problem(at('../package.json#name'))).toMatch(/has no headings/);
    expect(problem(at('../../outside.md'))).toMatch(/leaves the repository/);
  });

  it('accepts a page written elsewhere only while it does not exist, and never an anchor into it', () => {
    for (const page of WRITTEN_ELSEWHERE) {
      const target = `../${page}`;
      if (existsSync(join(root, page))) continue;
      expect(problem(at(target))).toBeUndefined();
      expect(problem(at(`${target}#a-heading`))).toBe(`${page} does not exist`);
    }
  });

  it('gives headings the anchors GitHub gives them', () => {
    const anchors = headings('docs/errors.md').map((h) => h.anchor);
    expect(anchors).toContain('delivery-errors-svcwebhookerror');
    expect(anchors).toContain('schema_violation');
    expect(headings('docs/events.md').map((h) => h.anchor)).toContain('taskcommentcreated');
  });
});
