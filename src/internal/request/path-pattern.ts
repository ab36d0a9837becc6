/**
 * The `path` option: a fixed path (`/webhooks/board`), or a path with one parameter segment
 * (`/webhooks/boards/:boardId`) for integrations that register one URL per board or per bot.
 */
export interface PathPattern {
  /** The path as configured, normalised. */
  readonly path: string;
  /** The parameter's name, or undefined for a fixed path. */
  readonly param: string | undefined;
  /**
   * For a matching request path: the parameter's decoded value ('' for a fixed path).
   * Undefined when the path does not match.
   */
  match(pathname: string): string | undefined;
}

/** Ids longer than this are no board or bot id; such a path does not match. */
export const MAX_PATH_ID_LENGTH = 200;

const PARAM = /^:([A-Za-z][A-Za-z0-9_]*)$/;

/** '/a/b/' and '/a/b' are one route, as in Express's default (non-strict) routing. */
export function normalisePath(pathname: string): string {
  return pathname.length > 1 && pathname.endsWith('/') ? pathname.slice(0, -1) : pathname;
}

/** `allowed`: the parameter names this webhook knows (boardId for board, botId for bot). */
export function pathPattern(value: unknown, allowed: readonly string[]): PathPattern {
  if (typeof value !== 'string' || !value.startsWith('/')) throw new TypeError('svc-webhooks: `path` must be a string starting with "/"');
  const path = normalisePath(value);
  const segments = path.split('/');
  const params = segments.map((s, i) => [i, PARAM.exec(s)?.[1]] as const).filter(([, name]) => name !== undefined);
  if (params.length === 0) {
    if (path.includes(':')) throw new TypeError(`svc-webhooks: \`path\` may hold one parameter segment, written ${allowed.map((a) => `:${a}`).join(' or ')}`);
    return { path, param: undefined, match: (pathname) => (pathname === path ? '' : undefined) };
  }
  const [index, name] = params[0]!;
  if (params.length > 1 || !allowed.includes(name!) || segments.some((s, i) => i !== index && s.includes(':'))) {
    throw new TypeError(`svc-webhooks: \`path\` may hold one parameter segment, written ${allowed.map((a) => `:${a}`).join(' or ')}`);
  }
  const prefix = `${segments.slice(0, index).join('/')}/`;
  const rest = segments.slice(index + 1).join('/');
  const suffix = rest === '' ? '' : `/${rest}`;
  return {
    path,
    param: name,
    match(pathname) {
      if (pathname.length <= prefix.length + suffix.length || !pathname.startsWith(prefix) || !pathname.endsWith(suffix)) return undefined;
      const raw = pathname.slice(prefix.length, pathname.length - suffix.length);
      if (raw.includes('/') || raw.length > MAX_PATH_ID_LENGTH * 3) return undefined;
      let id: string;
      try {
        id = decodeURIComponent(raw);
      } catch {
        return undefined;
      }
      return id === '' || id.length > MAX_PATH_ID_LENGTH ? undefined : id;
    },
  };
}

type RoutedRequest = { originalUrl?: string; url?: string; params?: Record<string, unknown> };

/** The path of a request without its query, as the sender posted it (Express's originalUrl when mounted). */
export function requestPathname(req: RoutedRequest): string {
  return withoutQuery(req.originalUrl ?? req.url ?? '');
}

function withoutQuery(url: string): string {
  const query = url.indexOf('?');
  return normalisePath(query === -1 ? url : url.slice(0, query));
}

/**
 * Whether a request is on the pattern's path, and its parameter ('' for a fixed path): the path is
 * relative to where the middleware is mounted, as for Express routers (`req.url` under
 * `app.use('/api', webhook)`), and a full path that includes the mount prefix matches too.
 */
export function matchRequest(pattern: PathPattern, req: RoutedRequest): string | undefined {
  const mounted = pattern.match(withoutQuery(req.url ?? ''));
  if (mounted !== undefined || req.originalUrl === undefined || req.originalUrl === req.url) return mounted;
  return pattern.match(requestPathname(req));
}

/**
 * The id in a request's path: matched from the URL, or, when the middleware is a route handler
 * (`app.post('/hooks/:boardId', mw)`), the route parameter of the same name that Express parsed.
 */
export function pathId(pattern: PathPattern, req: RoutedRequest): string | undefined {
  if (pattern.param === undefined) return undefined;
  const matched = matchRequest(pattern, req);
  if (matched !== undefined) return matched;
  const param = req.params?.[pattern.param];
  return typeof param === 'string' && param !== '' && param.length <= MAX_PATH_ID_LENGTH ? param : undefined;
}
