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
