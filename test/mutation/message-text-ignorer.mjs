/**
 * A Stryker ignorer: leaves message text alone. Tests assert an error's `code` and status, never its
 * message (the message is for people and may change), and log lines are asserted by their fields,
 * so a mutant that only rewrites the words of a message can never be killed and says nothing about
 * the tests. Everything else in those expressions (which error, which code, which fields) is still
 * mutated.
 *
 * Ignored: the message argument of `new SvcWebhookError(code, message)`, `new Error(message)` and
 * the other built-in errors, `new AggregateError(errors, message)`, `new StoreTimeoutError(message)`,
 * `malformed(message)` (a SvcWebhookError maker), the PostgreSQL store's step names (below), and the
 * message string of a pino call (`log.warn(fields, message)`, `logger?.warn(fields, message)`).
 */

const ERROR_MESSAGE_ARGUMENT = new Map([
  ['SvcWebhookError', 1],
  ['AggregateError', 1],
  ['Error', 0],
  ['TypeError', 0],
  ['RangeError', 0],
  ['StoreTimeoutError', 0],
]);
// Functions (or `this.` methods) whose argument at that place is a name used only in messages:
// `malformed(message)`, and the PostgreSQL store's step names (`withTimeout(work, ms, what)`,
// `this.timed(work, what)`, `this.statement(what, sql, values)`), which name the step in a timeout's message.
const MESSAGE_FUNCTIONS = new Map([
  ['malformed', 0],
  ['withTimeout', 2],
  ['timed', 1],
  ['statement', 0],
]);
const LOG_METHODS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);

/** Text: a string, a template, a concatenation of them, or a choice between them. */
function isText(node) {
  switch (node.type) {
    case 'StringLiteral':
    case 'TemplateLiteral':
      return true;
    case 'BinaryExpression':
      return node.operator === '+' && (isText(node.left) || isText(node.right));
    case 'ConditionalExpression':
      return isText(node.consequent) && isText(node.alternate);
    default:
      return false;
  }
}

function calleeName(callee) {
  return callee.type === 'Identifier' ? callee.name : undefined;
}

/** `name(…)` or `this.name(…)`. */
function functionName(callee) {
  if (callee.type === 'MemberExpression' && callee.object.type === 'ThisExpression' && callee.property.type === 'Identifier') return callee.property.name;
  return calleeName(callee);
}

const messageText = {
  shouldIgnore(path) {
    if (path.listKey !== 'arguments' || !isText(path.node)) return undefined;
    const call = path.parent;
    const index = path.key;
    if (call.type === 'NewExpression' && ERROR_MESSAGE_ARGUMENT.get(calleeName(call.callee)) === index) {
      return 'message text of an error: tests assert its code, not its words';
    }
    // `logger?.warn(fields, message)` is an optional call of an optional member.
    if (call.type !== 'CallExpression' && call.type !== 'OptionalCallExpression') return undefined;
    if (MESSAGE_FUNCTIONS.get(functionName(call.callee)) === index) return 'message text of an error: tests assert its code, not its words';
    const callee = call.callee;
    if (
      (callee.type === 'MemberExpression' || callee.type === 'OptionalMemberExpression') &&
      callee.property.type === 'Identifier' &&
      LOG_METHODS.has(callee.property.name)
    ) {
      return 'message text of a log line: tests assert its fields, not its words';
    }
    return undefined;
  },
};

// The shape `declareValuePlugin(PluginKind.Ignore, ...)` returns, written out so that this file needs
// no import from Stryker's packages.
export const strykerPlugins = [{ kind: 'Ignore', name: 'MessageText', value: messageText }];
