/** The spec's exact rule: `svc_bot_`, a lowercase 8-4-4-4-12 hex UUID, `_`, 43 of [A-Za-z0-9_-], nothing after. */
const BOT_TOKEN = /^svc_bot_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;
const TOKEN_PREFIX_LENGTH = 6;

/** What a bot token says of itself: its bot id and the public prefix of its secret part. */
export interface BotTokenInfo {
  /** The bot user's UUID, embedded in the token so svc finds the bot with one lookup. */
  readonly botId: string;
  /** The first 6 characters of the secret part, as shown in the bot's profile. Safe to log. */
  readonly tokenPrefix: string;
}

/** Whether `value` has the shape of a bot token: `svc_bot_<uuid>_<43 characters>`. */
export function isBotToken(value: unknown): value is string {
  return typeof value === 'string' && BOT_TOKEN.test(value);
}

/** The bot id and `tokenPrefix` of a bot token, or undefined when it is not one. */
export function parseBotToken(value: string): BotTokenInfo | undefined {
  const match = BOT_TOKEN.exec(value);
  if (!match) return undefined;
  return { botId: match[1]!, tokenPrefix: match[2]!.slice(0, TOKEN_PREFIX_LENGTH) };
}

/**
 * Why a string is not a bot token, in words that never quote it (the string may be a real token
 * with one character off). Undefined when it is a bot token.
 */
export function botTokenProblem(value: string): string | undefined {
  if (BOT_TOKEN.test(value)) return undefined;
  if (!value.startsWith('svc_bot_')) return 'a bot token starts with svc_bot_';
  if (/\s/.test(value)) return 'the token contains whitespace (a trailing newline from a file?)';
  const rest = value.slice('svc_bot_'.length);
  const id = rest.slice(0, 36);
  if (!/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(id)) {
    return 'svc_bot_ must be followed by the bot id, a UUID in 8-4-4-4-12 form';
  }
  if (id !== id.toLowerCase()) return 'the bot id in a bot token is lowercase hexadecimal';
  if (rest[36] !== '_') return 'the bot id must be followed by "_"';
  const secret = rest.slice(37);
  if (!/^[A-Za-z0-9_-]*$/.test(secret)) return 'the secret part may hold only letters, digits, "_" and "-"';
  return `the secret part must be exactly 43 characters (it has ${secret.length})`;
}
