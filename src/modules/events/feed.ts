import type { EventFeed } from '../webhooks/index.ts';
import { EVENT_KEYS } from './catalog.ts';
import * as store from './outbox.store.ts';

/** The outbox as the webhook dispatcher and retention read it (given to them by the composition root). */
export const eventFeed: EventFeed = {
  keys: EVENT_KEYS,
  anyUndispatched: (q) => store.anyUndispatched(q),
  takeUndispatched: (q, limit) => store.takeUndispatched(q, limit),
  removeOld: (q, before, limit) => store.removeOldEvents(q, before, limit),
};
