/**
 * A host's stdout and stderr may outlive whoever reads them: the terminal that started `serve` closes, a
 * pipe's reader (`serve | head`) exits. A write then fails with EPIPE, delivered as an 'error' event; with
 * no listener that is an uncaught exception, whose handler writes the fault to stderr, which fails again:
 * a loop that spun serve at 100% CPU and kept it from ever finishing its stop (it ignored SIGINT and
 * SIGTERM after that). Past its reader, output has nowhere to go, so the host goes on without it.
 */
export function outliveClosedStdio(): void {
  for (const stream of [process.stdout, process.stderr]) {
    if (stream.listenerCount('error') > 0) continue;
    stream.on('error', () => undefined);
  }
}
