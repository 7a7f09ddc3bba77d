import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createLimiter } from '../../src/lib/limiter.ts';

/** A call that stays in progress until `open()` is called; notes when it started. */
function gate(log: string[], name: string) {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return {
    open,
    fn: async () => {
      log.push(`start ${name}`);
      await opened;
      return name;
    },
  };
}
const tick = () => new Promise((r) => setImmediate(r));

describe('limiter (the bound on password hashing)', () => {
  test('at most `max` calls run at once; the others start in arrival order as slots free', async () => {
    const log: string[] = [];
    const limiter = createLimiter(2);
    const calls = ['a', 'b', 'c', 'd', 'e'].map((n) => gate(log, n));
    const results = calls.map((c) => limiter.run(c.fn));
    await tick();
    assert.deepEqual(log, ['start a', 'start b']);
    assert.equal(limiter.active, 2);
    assert.equal(limiter.waiting, 3);
    calls[1].open();
    await tick();
    assert.deepEqual(log, ['start a', 'start b', 'start c']);
    calls[0].open();
    calls[2].open();
    await tick();
    assert.deepEqual(log, ['start a', 'start b', 'start c', 'start d', 'start e']);
    calls[3].open();
    calls[4].open();
    assert.deepEqual(await Promise.all(results), ['a', 'b', 'c', 'd', 'e']);
    assert.equal(limiter.active, 0);
    assert.equal(limiter.waiting, 0);
  });

  test('a call that fails frees its slot and its error reaches its caller only', async () => {
    const limiter = createLimiter(1);
    const failing = limiter.run(async () => {
      throw new Error('boom');
    });
    const next = limiter.run(async () => 'ran');
    await assert.rejects(failing, /boom/);
    assert.equal(await next, 'ran');
    assert.equal(limiter.active, 0);
  });

  test('a newcomer does not overtake callers already waiting', async () => {
    const log: string[] = [];
    const limiter = createLimiter(1);
    const first = gate(log, 'first');
    const waiting = gate(log, 'waiting');
    const p1 = limiter.run(first.fn);
    const p2 = limiter.run(waiting.fn);
    await tick();
    first.open();
    await p1;
    // The slot passed to `waiting` on release: a call arriving now queues behind it.
    const late = gate(log, 'late');
    const p3 = limiter.run(late.fn);
    await tick();
    assert.deepEqual(log, ['start first', 'start waiting']);
    waiting.open();
    late.open();
    assert.deepEqual(await Promise.all([p2, p3]), ['waiting', 'late']);
    assert.deepEqual(log, ['start first', 'start waiting', 'start late']);
  });

  test('max must be a positive integer', () => {
    assert.throws(() => createLimiter(0), /positive integer/);
    assert.throws(() => createLimiter(1.5), /positive integer/);
  });
});
