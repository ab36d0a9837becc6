/**
 * Next.js App Router: app/api/webhooks/board/route.ts. The route's place is its path; the handler
 * reads the raw body itself (a route handler has no body parser in front of it).
 */
import { createWebHandler } from '../../../../../../../src'; // in your project: from 'svc-webhooks'
import { board } from '../../../../lib/board-webhook';

export const POST = createWebHandler(board);
// node:crypto verifies the signature: run on the Node.js runtime (the default), not the edge runtime.
export const runtime = 'nodejs';
