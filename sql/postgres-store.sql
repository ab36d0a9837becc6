-- svc-webhooks: the table of the PostgreSQL de-dup store (postgresStore). Safe to apply again.
CREATE TABLE IF NOT EXISTS "svc_webhook_deliveries" (
  -- The delivery id (an id longer than 200 characters, with a NUL or a lone surrogate, or that begins with "sha256", as "sha256:" or "sha256u:" and a hash).
  id text PRIMARY KEY,
  -- The claim's token while an attempt runs the handlers; NULL once the delivery is done.
  token text,
  -- When the claim's lease ends; for a done delivery, when its id may be forgotten.
  expires_at timestamptz NOT NULL
);
-- Pruning finds expired rows by it.
CREATE INDEX IF NOT EXISTS "svc_webhook_deliveries_expires_at_idx" ON "svc_webhook_deliveries" (expires_at);
-- The failed attempts of deliveries, kept for the store's retention after the last one.
CREATE TABLE IF NOT EXISTS "svc_webhook_deliveries_failures" (
  -- The delivery's row key, as in the store's table.
  id text PRIMARY KEY,
  -- When it first failed, in ms since the epoch.
  first_failed_at double precision NOT NULL,
  attempts integer NOT NULL,
  -- The last error's message, as JSON text.
  last_error text NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS "svc_webhook_deliveries_failures_expires_at_idx" ON "svc_webhook_deliveries_failures" (expires_at);
-- Parked deliveries (parkAfterMs, schemaPolicy 'park'), kept for parkedRetentionMs for a replay.
CREATE TABLE IF NOT EXISTS "svc_webhook_deliveries_parked" (
  -- The delivery's row key, as in the store's table.
  id text PRIMARY KEY,
  -- The delivery id itself, as JSON text.
  delivery text NOT NULL,
  webhook text NOT NULL,
  -- The event's type or kind, as JSON text.
  kind text NOT NULL,
  reason text NOT NULL,
  -- Times in ms since the epoch; first_failed_at and replayed_at may be NULL.
  parked_at double precision NOT NULL,
  first_failed_at double precision,
  attempts integer NOT NULL,
  last_error text NOT NULL,
  -- svc's headers, a JSON object.
  headers text NOT NULL,
  body bytea NOT NULL,
  replayed_at double precision,
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS "svc_webhook_deliveries_parked_parked_at_idx" ON "svc_webhook_deliveries_parked" (parked_at, id);
