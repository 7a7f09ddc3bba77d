export { createEventsService, dispatchedAtSql, type EventsService } from './service.ts';
export { EVENT_KEYS, type EventKey, type NewEvent } from './catalog.ts';
// Events written by another module's statement from the rows it changed, as one of its WITH items.
export { eventsFromRowsItem } from './from-rows.sql.ts';
export type { Bus, Subscriber } from './bus.ts';
export type { DomainEventName, DomainEvents, LockedUser } from './domain.ts';
export { eventFeed } from './feed.ts';
