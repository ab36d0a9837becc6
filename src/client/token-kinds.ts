/**
 * The recognizable prefixes of svc secrets (spec: "Every secret has a recognizable prefix"). Only
 * the prefix is looked at: OAuth tokens, codes and secrets are opaque and are never parsed.
 */
export const tokenPrefixes = {
  bot: 'svc_bot_',
  oauthClientId: 'svc_client_',
  oauthClientSecret: 'svc_os_',
  authorizationCode: 'svc_oc_',
  oauthAccessToken: 'svc_oa_',
  oauthRefreshToken: 'svc_or_',
} as const;

/** The kind of an svc token, told by its prefix; `other` for anything else. */
export type TokenKind = keyof typeof tokenPrefixes | 'other';

/** Which kind of svc credential a string claims to be, by its prefix alone. */
export function tokenKind(value: string): TokenKind {
  for (const [kind, prefix] of Object.entries(tokenPrefixes)) {
    if (value.startsWith(prefix)) return kind as TokenKind;
  }
  return 'other';
}

/** True for the OAuth credentials: none of them is accepted by the REST API. */
export function isOAuthCredential(kind: TokenKind): boolean {
  return kind !== 'bot' && kind !== 'other';
}
