/**
 * Next.js App Router: app/api/webhooks/board/route.ts. The route's place is its path; the handler
 * reads the raw body itself (a route handler has no body parser in front of it).
 */
import { createWebHandler } from '../../../../../../../src'; // in your project: from 'svc-webhooks'
import { board } from '../../../../lib/board-webhook';

export const POST = createWebHandler(board);
// The Node.js runtime (the default); ../board-edge/route.ts is the same webhook on the edge runtime.
export const runtime = 'nodejs';
