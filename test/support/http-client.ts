import http from 'node:http';

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: () => any;
}

export interface SendOptions {
  /** Declare this Content-Length instead of the body's own. */
  declaredLength?: number;
  /** Send the body in chunks, without Content-Length. */
  chunked?: boolean;
}

/**
 * POSTs `body` to a real server over TCP on 127.0.0.1. With `declaredLength` larger than the body,
 * only the body is sent and the answer must come without the rest; with `chunked`, the body is
 * streamed, and a server that answers before reading it all may cut the upload short.
 */
export function httpPost(
  baseUrl: string,
  path: string,
  headers: Record<string, string>,
  body: string | Buffer,
  options: SendOptions = {},
): Promise<HttpAnswer> {
  const url = new URL(path, baseUrl);
  const sent: Record<string, string> = { ...headers };
  if (options.chunked) sent['Transfer-Encoding'] = 'chunked';
  else sent['Content-Length'] = String(options.declaredLength ?? Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: url.port, path: url.pathname, method: 'POST', headers: sent, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text, json: () => JSON.parse(text) }));
      res.on('error', reject);
    });
    // A server that refuses an upload early may close the socket while it is still being written.
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ECONNRESET') reject(err);
    });
    if (options.chunked) {
      const bytes = Buffer.from(body);
      for (let at = 0; at < bytes.length; at += 16 * 1024) req.write(bytes.subarray(at, at + 16 * 1024));
      req.end();
    } else if (options.declaredLength !== undefined) {
      req.write(body);
    } else {
      req.end(body);
    }
  });
}
