/**
 * Who may read the inspector: it shows verified payloads, so it answers only
 *
 * - without an access token: connections made to a loopback address of this machine whose Host is
 *   this machine's name (or one listed in `allowedHosts`), so neither another machine (whatever
 *   Host it sends) nor a web page through DNS rebinding can read it. A proxy or tunnel on this
 *   machine connects over loopback too, and nginx rewrites Host to the upstream's by default, so a
 *   request that says it was forwarded (`Forwarded`, `X-Forwarded-For`, `X-Real-IP`) is refused:
 *   behind a proxy the inspector needs its token;
 * - with an access token: requests that carry it, in an `Authorization: Bearer` header or in the
 *   cookie that the page's form sets. Never in a URL: URLs end up in access logs and histories.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';

/** The cookie the form sets; scoped to the inspector's path, not readable by scripts. */
export const ACCESS_COOKIE = 'svc_inspector_access';

export interface InspectorAccessOptions {
  /** Where the inspector is served. */
  readonly path: string;
  /** Host names answered besides this machine's, without a token. */
  readonly allowedHosts: readonly string[];
  /** The token every request must carry; undefined: loopback connections only. */
  readonly accessToken: string | undefined;
  /** Where a refused forwarded request is reported (at most once a minute). */
  readonly logger?: { warn(fields: object, message: string): void } | undefined;
}

/** The headers a proxy or tunnel adds to say for whom it connects. */
export const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-real-ip'] as const;
const FORWARDED_LOG_INTERVAL_MS = 60_000;

const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

/** Whether a socket's address is a loopback one: 127/8, ::1, or 127/8 mapped into IPv6. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return address === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/** A router that answers a request that may not read the inspector, and passes the others on. */
export function inspectorAccess(options: InspectorAccessOptions): Router {
  const router = express.Router();
  const { path, accessToken } = options;
  if (accessToken === undefined) {
    const hosts = new Set([...LOOPBACK_HOSTS, ...options.allowedHosts.map((h) => h.toLowerCase())]);
    let loggedAt = Number.NEGATIVE_INFINITY;
    router.use(path, (req: Request, res: Response, next: NextFunction) => {
      const forwarded = FORWARDING_HEADERS.find((name) => req.headers[name] !== undefined);
      if (forwarded !== undefined) {
        if (Date.now() - loggedAt >= FORWARDED_LOG_INTERVAL_MS) {
          loggedAt = Date.now();
          options.logger?.warn(
            { header: forwarded },
            `inspector: refused a request forwarded by a proxy or tunnel (${forwarded}): it may come from another machine. Behind a proxy, turn on the access token (the example server: SVC_INSPECTOR=token)`,
          );
        }
        res
          .status(403)
          .type('text/plain')
          .send('inspector: refuses requests forwarded by a proxy or tunnel unless it runs with an access token (the example server: SVC_INSPECTOR=token)\n');
        return;
      }
      if (isLoopbackAddress(req.socket.localAddress) && hosts.has(hostName(req.headers.host))) {
        next();
        return;
      }
      res.status(403).type('text/plain').send('inspector: answers this machine only; add the Host to allowedHosts, or run it with an access token\n');
    });
    return router;
  }
  if (accessToken.length < 32) throw new TypeError('inspector: `accessToken` must be at least 32 characters (use randomBytes(32).toString("base64url"))');
  const expected = digest(accessToken);
  const carries = (value: string | undefined): boolean => value !== undefined && timingSafeEqual(digest(value), expected);

  router.post(`${path}/access`, express.urlencoded({ extended: false, limit: '1kb' }), (req: Request, res: Response) => {
    const token = (req.body as { token?: unknown } | undefined)?.token;
    if (typeof token !== 'string' || !carries(token)) {
      accessForm(res.status(401), path, true);
      return;
    }
    const secure = req.secure ? '; Secure' : '';
    res.set('Set-Cookie', `${ACCESS_COOKIE}=${encodeURIComponent(token)}; Path=${path}; HttpOnly; SameSite=Strict${secure}`);
    res.redirect(303, path);
  });
  router.use(path, (req: Request, res: Response, next: NextFunction) => {
    if (carries(bearer(req.headers.authorization)) || carries(cookie(req.headers.cookie, ACCESS_COOKIE))) {
      next();
      return;
    }
    if (req.method === 'GET' && req.path === '/') accessForm(res.status(401), path, false);
    else res.status(401).type('text/plain').send('inspector: send the access token (Authorization: Bearer <token>), or enter it on the page\n');
  });
  return router;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

function bearer(header: string | undefined): string | undefined {
  return header !== undefined && header.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : undefined;
}

function cookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** A page with one field: the token is posted in the body, never put in the URL. */
function accessForm(res: Response, path: string, wrong: boolean): void {
  res.set({
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': "default-src 'none'; form-action 'self'; frame-ancestors 'none'",
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  });
  res.send(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>svc-webhooks inspector: access token</title></head>
<body>
  <h1>svc-webhooks delivery inspector</h1>
  <p>This server listens beyond this machine, so its inspector needs the access token it wrote at startup (the server printed where).</p>
  ${wrong ? '<p role="alert">That is not the access token.</p>' : ''}
  <form method="post" action="${path}/access">
    <label>Access token <input type="password" name="token" autocomplete="off" required></label>
    <button type="submit">Open</button>
  </form>
</body>
</html>
`);
}

/** The name in a Host header, without the port: `localhost:3000` -> `localhost`, `[::1]:3000` -> `[::1]`. */
export function hostName(host: string | undefined): string {
  if (host === undefined) return '';
  const lower = host.toLowerCase();
  if (lower.startsWith('[')) return lower.slice(0, lower.indexOf(']') + 1);
  const colon = lower.indexOf(':');
  return colon === -1 ? lower : lower.slice(0, colon);
}
