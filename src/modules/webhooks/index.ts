export { createWebhooksService, type WebhooksService } from './service.ts';
export { createDispatcher, type Dispatcher } from './dispatcher.ts';
export { webhooksRoutes } from './routes.ts';
export { sign } from './deliver.ts';
export { webhookWantsSql, deliveryPendingSql, type EventFeed, type FeedEvent } from './subscriptions.ts';
