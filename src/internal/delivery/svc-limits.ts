/** The sender retries a delivery for one day (the spec's delivery lifetime). */
export const DAY_MS = 24 * 60 * 60 * 1000;
/** How long delivery ids are remembered by default: the retry day plus a margin for clock skew. */
export const DEFAULT_RETENTION_MS = DAY_MS + 60 * 60 * 1000;
