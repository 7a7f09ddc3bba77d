/**
 * A background task that runs a minute after start and then every `everyMs`, never two passes at once; `stop` waits
 * for a pass in flight. Shaped as a worker for the job runner (`jobs.attach`), so it starts and stops with it.
 * `pass` handles (logs) its own errors.
 */
export function periodicWorker(pass: () => Promise<void>, everyMs: number, firstMs = 60_000) {
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> | undefined;
  const run = () => {
    if (current) return;
    current = pass().finally(() => (current = undefined));
  };
  return {
    start(): void {
      if (timer) return;
      timer = setTimeout(function tick() {
        run();
        timer = setTimeout(tick, everyMs);
        timer.unref();
      }, firstMs);
      timer.unref();
    },
    async stop(): Promise<void> {
      clearTimeout(timer);
      timer = undefined;
      await current;
    },
  };
}
