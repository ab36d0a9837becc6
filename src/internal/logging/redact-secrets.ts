/**
 * Anything that looks like an svc secret: a known prefix followed by at least 16 token characters.
 * Shorter tails are left alone so that names such as `svc_client_id` survive in log text. The
 * lookahead takes the whole run of token characters, never a shorter match inside it.
 */
const SECRET_LOOKING = /svc_(bot|os|oc|oa|or|client)_([A-Za-z0-9_\-.+/=~]{16,})(?![A-Za-z0-9_\-.+/=~])/g;
const BOT_ID = /^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})_/;
/** A full secret part; only then are its first characters kept (the public `tokenPrefix`). */
const FULL_SECRET_LENGTH = 43;
const KEPT = 6;
export const REDACTED = '…[redacted]';

/**
 * Replaces every svc secret-looking string in `text` with its kind prefix, the bot id for a bot
 * token, and the 6-character `tokenPrefix` of a full-length secret:
 * `svc_bot_<id>_abc123…[redacted]`. Nothing after those 6 characters is ever kept.
 */
export function redactSecrets(text: string): string {
  return text.replace(SECRET_LOOKING, (match: string, kind: string, tail: string, offset: number) => {
    let head = `svc_${kind}_`;
    let secret = tail;
    const id = kind === 'bot' ? BOT_ID.exec(tail) : null;
    if (id) {
      head += id[0];
      secret = tail.slice(id[0].length);
    }
    // Our own output (a bot id and at most the 6-character prefix, then the marker) is left as
    // it is, so redacting twice changes nothing; a longer secret before the marker is still cut.
    if (secret.length <= KEPT && text.startsWith(REDACTED, offset + match.length)) return match;
    return head + (secret.length >= FULL_SECRET_LENGTH ? secret.slice(0, KEPT) : '') + REDACTED;
  });
}

/** Where `redactingStream` writes: anything with `write(text)`, such as process.stdout. */
export interface LineWriter {
  write(chunk: string): unknown;
}

/**
 * A log destination that redacts before writing, e.g. `pino(options, redactingStream(process.stdout))`.
 * pino writes each log line in one call, so a token is never split across chunks.
 */
export function redactingStream(destination: LineWriter): LineWriter {
  return { write: (chunk: string) => destination.write(redactSecrets(String(chunk))) };
}
