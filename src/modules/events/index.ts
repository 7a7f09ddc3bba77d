export { createEventsService, dispatchedAtSql, type EventsService } from './service.ts';
export { EVENT_KEYS, type EventKey, type NewEvent } from './catalog.ts';
export type { Bus, Subscriber } from './bus.ts';
export type { DomainEventName, DomainEvents, LockedUser } from './domain.ts';
