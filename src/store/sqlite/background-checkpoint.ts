// Copies the WAL into the database file on a worker thread. SQLite's automatic checkpoint runs
// inside the COMMIT that crosses its threshold, on the thread that committed: copying tens of
// MiB and the fsync of the database file blocked the event loop for 300 ms at a time (a quarter
// of the commit time of bench/issue-ca.ts). A second connection checkpoints concurrently with
// the writer, as WAL mode allows; crash safety is SQLite's either way.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** frames in the WAL and how many of them the checkpoint copied */
export interface CheckpointResult { frames: number; copied: number }

// CommonJS evaluated in the worker, so that it runs the same under tsx and from dist/; the
// driver's path comes from here, the worker has no module resolution of its own
const checkpointerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
parentPort.on('message', (m) => {
  if (m === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ frames: r.log, copied: r.checkpointed });
  } catch (e) {
    parentPort.postMessage({ error: String((e && e.message) || e) });
  }
});
`;

export class BackgroundCheckpointer {
  private worker: Worker | undefined;
  private inFlight = false;
  private failed = false;

  /**
   * `settled` receives each finished checkpoint; `failed` is called once if the worker cannot
   * checkpoint (the store then checkpoints on its own thread again).
   */
  constructor(
    private readonly path: string,
    private readonly settled: (r: CheckpointResult) => void,
    private readonly failedWith: (err: Error) => void,
  ) {}

  /** a checkpoint is running: another connection's checkpoint would wait for it */
  get busy(): boolean {
    return this.inFlight;
  }

  /** Starts a checkpoint unless one is running; the worker starts on the first one. */
  request(): void {
    if (this.inFlight || this.failed) return;
    try {
      this.worker ??= this.start();
    } catch (err) {
      this.fail(err as Error);
      return;
    }
    this.inFlight = true;
    // held open while it works, so that its answer (and the store's close) is awaited
    this.worker.ref();
    this.worker.postMessage('checkpoint');
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    this.failed = true;
    if (!w) return;
    const exited = new Promise((resolve) => w.once('exit', resolve));
    w.ref();
    w.postMessage('close');
    await exited;
  }

  private start(): Worker {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const w = new Worker(checkpointerSource, { eval: true, workerData: { driver, path: this.path } });
    w.on('message', (m: CheckpointResult | { error: string }) => {
      this.inFlight = false;
      // the answer to a checkpoint that was running when the store closed
      if (this.worker !== w) return;
      // an idle store left open must not keep the process alive
      w.unref();
      if ('error' in m) this.fail(new Error(m.error));
      else this.settled(m);
    });
    w.on('error', (err) => this.fail(err));
    return w;
  }

  private fail(err: Error) {
    this.inFlight = false;
    if (this.failed) return;
    this.failed = true;
    const w = this.worker;
    this.worker = undefined;
    void w?.terminate();
    this.failedWith(err);
  }
}
