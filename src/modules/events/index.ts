export { createEventsService, dispatchedAtSql, type EventsService } from './service.ts';
export { EVENT_KEYS, type EventKey, type NewEvent } from './catalog.ts';
export { eventFeed } from './feed.ts';
