// The process's own series, named as Prometheus' process collector names them (cert-manager
// registers client_golang's, so alerts on restarts, CPU, memory and descriptors carry over), and
// Node's heap beside them as prom-client names it. Everything is read at scrape time: nothing
// samples in the background, so an idle server stays idle (prom-client's default set runs an
// event-loop delay monitor that wakes every 10 ms).
import { readFileSync, readdirSync } from 'node:fs';
import { Counter, Gauge, type Registry } from './prom-classes.ts';

const startTimeSeconds = (Date.now() - process.uptime() * 1000) / 1000;

/** A /proc read; undefined where there is no /proc (the series is then left out, as client_golang does). */
function fromProc<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/** proc(5): field 23 of /proc/self/stat is vsize; the command name (field 2) may hold spaces, so count from its ")". */
const virtualMemoryBytes = () => fromProc(() => {
  const stat = readFileSync('/proc/self/stat', 'latin1');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[20]);
});
const openFds = () => fromProc(() => readdirSync('/proc/self/fd').length);
const maxFds = () => fromProc(() => {
  const line = readFileSync('/proc/self/limits', 'latin1').split('\n').find((l) => l.startsWith('Max open files'));
  const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
  return soft === undefined ? undefined : soft === 'unlimited' ? Infinity : Number(soft);
});

export function registerProcessMetrics(registry: Registry): void {
  const registers = [registry];
  const gauge = (name: string, help: string, value: () => number | undefined) =>
    new Gauge({
      name, help, registers,
      collect() {
        this.reset();
        const v = value();
        if (v !== undefined && !Number.isNaN(v)) this.set(v);
      },
    });
  new Counter({
    name: 'process_cpu_seconds_total', help: 'Total user and system CPU time spent in seconds.', registers,
    collect() {
      const { user, system } = process.cpuUsage();
      this.reset();
      this.inc((user + system) / 1e6);
    },
  });
  gauge('process_start_time_seconds', 'Start time of the process since unix epoch in seconds.', () => startTimeSeconds);
  gauge('process_resident_memory_bytes', 'Resident memory size in bytes.', () => process.memoryUsage.rss());
  gauge('process_virtual_memory_bytes', 'Virtual memory size in bytes.', virtualMemoryBytes);
  gauge('process_open_fds', 'Number of open file descriptors.', openFds);
  gauge('process_max_fds', 'Maximum number of open file descriptors.', maxFds);
  const heap = () => process.memoryUsage();
  gauge('nodejs_heap_size_total_bytes', 'Process heap size from Node.js in bytes.', () => heap().heapTotal);
  gauge('nodejs_heap_size_used_bytes', 'Process heap size used from Node.js in bytes.', () => heap().heapUsed);
  gauge('nodejs_external_memory_bytes', 'Node.js external memory size in bytes.', () => heap().external);
  new Gauge({
    name: 'nodejs_version_info', help: 'Node.js version info.', labelNames: ['version'], registers,
    collect() { this.set({ version: process.version }, 1); },
  });
}
