import type { RequestListener } from 'node:http';
import { SVC_SECRET } from '../signing';
import { trivialHandler } from './handler';
import { installedSvcWebhooks } from './installed';

// Loaded with this module, as a server's `require('svc-webhooks')` at its top.
const { createNodeHandler, svcBoardWebhook } = installedSvcWebhooks();

/** The node:http mount of svc-node (board, every default), from the installed package. */
export function createListener(): RequestListener {
  return createNodeHandler(svcBoardWebhook(SVC_SECRET).on('task.updated', trivialHandler));
}
