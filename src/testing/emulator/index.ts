/** The svc emulator of `svc-webhooks/testing`: `createFakeSvc` and what it answers with. */
export { createFakeSvc } from './create-fake-svc';
export type { FakeSvc, FakeSvcOptions } from './fake-svc-types';
export type { ApiRequest, ApiTrafficOptions } from './api-traffic';
export { FakeSvcError, fakeSvcErrorCodes, type FakeSvcErrorCode } from './emulator-error';
export type { Audit, AuditAttempt, AuditDelivery } from './audit';
export type { ChaosOptions } from './chaos';
export type { EmulatedBoard, EmulatedBot, EmulatedPerson } from './directory';
export type { BoardEmit, BotEmit, ChangeAuthor, EmittedBoardType } from './emitted-events';
export type { Emitted } from './emulator-core';
export type { BoardWebhookView, BotWebhookView, DeliveryStatus, StateTimeFormat } from './webhook-record';
export type { ApiFault, ApiFaultAnswer } from './api-faults';
export { CONTROL_ROUTES } from './control-routes';
