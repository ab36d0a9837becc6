import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import { SvcWebhookError } from '../errors';
import { boardWebhookEventSchema, botWebhookUpdateSchema } from '../generated/schemas';

/** What to do with an authentic delivery that does not match the schema. */
export type SchemaPolicy = 'reject' | 'warn' | 'skip';
export const schemaPolicies: readonly SchemaPolicy[] = ['reject', 'warn', 'skip'];

export type SchemaName = 'board' | 'bot';

let compiled: Record<SchemaName, ValidateFunction> | undefined;

/** Compiled once per process and shared by every middleware, so setup cost is paid once. */
export function validatorFor(name: SchemaName): ValidateFunction {
  if (compiled === undefined) {
    const ajv = new Ajv2020({ strict: true, strictTypes: false, allErrors: false });
    compiled = {
      board: ajv.compile(boardWebhookEventSchema as object),
      bot: ajv.compile(botWebhookUpdateSchema as object),
    };
  }
  return compiled[name];
}

export interface SchemaProblem {
  path: string;
  message: string;
}

function problems(errors: ErrorObject[] | null | undefined): SchemaProblem[] {
  return (errors ?? []).slice(0, 5).map((e) => ({ path: e.instancePath || '/', message: e.message ?? e.keyword }));
}

/** Checks a payload against its schema; returns the problems found (empty when it passes). */
export function schemaProblems(validate: ValidateFunction, payload: unknown): SchemaProblem[] {
  return validate(payload) ? [] : problems(validate.errors);
}

export function schemaViolation(found: SchemaProblem[]): SvcWebhookError {
  const first = found[0];
  const where = first ? `: ${first.path} ${first.message}` : '';
  return new SvcWebhookError('schema_violation', `payload does not match the schema${where}`, { details: found });
}
