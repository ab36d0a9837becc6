import { usageError } from '../cli-error';
import type { Command } from '../command';
import { formatFields, terminalJson, withoutCredentials } from '../format';
import { oneOf, parseOptions } from '../parse-options';
import { withProgress } from '../progress';
import { requiredSecret } from '../read-input';
import { refuseSetOnlyOptions, SETUP_OPTIONS, setupClient } from '../setup-client';

const help = `Usage: svc-webhooks bot-webhook set|get|delete [options]

Manage the bot webhook through svc's setup routes (/api/bots/me/webhook), as the bot.
The bot token is read from SVC_BOT_TOKEN or --token-file, and sent only in the
Authorization header; it is never accepted on the command line.

  set      register (or replace, or re-enable) the webhook: --url and --secret-file
           (or SVC_BOT_WEBHOOK_SECRET)
  get      print the webhook's state
  delete   remove the webhook; svc drops its queue

Options:
  --base-url <url>       svc's base address (or SVC_BASE_URL)
  --token-file <file>    read the bot token from a file (default: SVC_BOT_TOKEN)
  --url <url>            set: the https URL svc delivers to (public address only)
  --secret-file <file>   set: read the webhook secret (16 to 256 characters, not the bot
                         token) from a file (or set SVC_BOT_WEBHOOK_SECRET, as the receiver
                         reads it, or SVC_WEBHOOK_SECRET); --secret is refused,
                         as a value on the command line shows in process lists and shell history
  --json                 print the state as JSON
  -h, --help             show this help

The url and secret are checked locally before anything is sent.

Example:
  SVC_BOT_TOKEN=... npx svc-webhooks bot-webhook set --base-url https://acme.svc.example.com \\
    --url https://bot.example.com/webhooks/bot --secret-file bot-webhook-secret.txt
`;

const TOKEN_ENV = 'SVC_BOT_TOKEN';

export const botWebhookCommand: Command = {
  name: 'bot-webhook',
  summary: 'set, get or delete the bot webhook (bot token from SVC_BOT_TOKEN)',
  help,
  async run(args, io) {
    const { values, positionals } = parseOptions('bot-webhook', args, SETUP_OPTIONS);
    if (positionals.length !== 1) throw usageError('bot-webhook takes one action: set, get or delete (see svc-webhooks bot-webhook --help)');
    const action = oneOf(positionals[0], ['set', 'get', 'delete'] as const, 'the action')!;
    refuseSetOnlyOptions('bot-webhook', action, values);
    const { client, caller: who } = setupClient(io, {
      baseUrl: values['base-url'],
      tokenFile: values['token-file'],
      tokenEnv: TOKEN_ENV,
      allowInsecureHttp: values['allow-insecure-http'] === true,
    });
    const json = values.json === true;

    if (action === 'set') {
      if (values.url === undefined) throw usageError('bot-webhook set needs --url <https url>');
      const secret = requiredSecret(io, { file: values['secret-file'], envName: 'SVC_WEBHOOK_SECRET', webhookEnvName: 'SVC_BOT_WEBHOOK_SECRET' });
      const state = await withProgress(io, 'setting the bot webhook', () => client.setBotWebhook({ url: values.url!, secret }));
      io.stdout.write(json ? terminalJson(withoutCredentials(state)) : `bot webhook set${who}:\n${formatFields(state)}`);
      return 0;
    }
    if (action === 'get') {
      const state = await withProgress(io, 'reading the bot webhook', () => client.getBotWebhook());
      if (json) io.stdout.write(terminalJson(withoutCredentials(state)));
      else io.stdout.write(state === null ? `no bot webhook is set${who}\n` : `bot webhook${who}:\n${formatFields(state)}`);
      return 0;
    }
    await withProgress(io, 'deleting the bot webhook', () => client.deleteBotWebhook());
    io.stdout.write(json ? '{ "deleted": true }\n' : `bot webhook deleted${who}; svc dropped its queue\n`);
    return 0;
  },
};
