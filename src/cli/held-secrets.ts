import { redactSecrets } from '../internal/logging/redact-secrets';
import type { LineWriter } from '../internal/logging/redact-secrets';

/** Shorter values are not secrets svc accepts, and replacing them could mangle ordinary words. */
const MIN_HELD_LENGTH = 8;
export const HELD_REDACTED = '[redacted]';

/**
 * The token and webhook secrets a CLI run was given: whatever it prints (svc may echo them in an
 * error), the exact values never reach the terminal, whatever their shape.
 */
export class HeldSecrets {
  private readonly values = new Set<string>();

  hold(value: string): string {
    if (value.length >= MIN_HELD_LENGTH) this.values.add(value);
    return value;
  }

  redact(text: string): string {
    let out = text;
    for (const value of this.values) if (out.includes(value)) out = out.split(value).join(HELD_REDACTED);
    return redactSecrets(out);
  }

  stream(destination: LineWriter): LineWriter {
    return { write: (chunk: string) => destination.write(this.redact(String(chunk))) };
  }
}
