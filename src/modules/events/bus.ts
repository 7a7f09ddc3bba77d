import type { DomainEventName, DomainEvents } from './domain.ts';

/** A subscriber of domain event `K`: runs in the publisher's transaction; a throw rolls that transaction back. */
export type Subscriber<K extends DomainEventName> = (
  tx: DomainEvents[K]['tx'],
  data: DomainEvents[K]['data'],
) => Promise<unknown>;

/**
 * The in-process bus of domain events (domain.ts). Subscribers are registered by the composition root and run one
 * after another in the order registered, awaited, inside the publisher's transaction; the first error stops the
 * rest and reaches the publisher.
 */
export function createBus() {
  const subscribers = new Map<DomainEventName, Subscriber<never>[]>();
  return {
    on<K extends DomainEventName>(name: K, fn: Subscriber<K>): void {
      const list = subscribers.get(name) ?? [];
      list.push(fn as Subscriber<never>);
      subscribers.set(name, list);
    },
    async publish<K extends DomainEventName>(
      tx: DomainEvents[K]['tx'],
      name: K,
      data: DomainEvents[K]['data'],
    ): Promise<void> {
      for (const fn of (subscribers.get(name) ?? []) as Subscriber<K>[]) await fn(tx, data);
    },
  };
}
export type Bus = ReturnType<typeof createBus>;
