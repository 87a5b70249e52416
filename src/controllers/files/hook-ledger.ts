// DIR/.hooks.json: which version of each lineage the deploy hook last ran for, so that a
// restart with nothing new does not reload every web server on the host again.
import { lstatSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { open, rename, mkdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';

export interface HookRecord {
  /** lineage hash the hook succeeded for (or that was live when no hook was configured) */
  hash: string;
  revision?: number;
  at: string;
}

export class HookLedger {
  private readonly records = new Map<string, HookRecord>();
  /** writes go one after another: each writes the whole map as it is then */
  private writing: Promise<void> = Promise.resolve();

  constructor(readonly file: string) {
    removeLeftovers(file);
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      // missing or unreadable: the hook may run once more for what is live, which is harmless
      return;
    }
    if (parsed && typeof parsed === 'object') {
      for (const [k, v] of Object.entries(parsed as Record<string, HookRecord>)) {
        if (v && typeof v.hash === 'string') this.records.set(k, v);
      }
    }
  }

  static in(root: string): HookLedger {
    return new HookLedger(join(root, '.hooks.json'));
  }

  get(key: string): HookRecord | undefined {
    return this.records.get(key);
  }

  keys(): string[] {
    return [...this.records.keys()];
  }

  set(key: string, record: HookRecord): Promise<void> {
    this.records.set(key, record);
    return this.flush();
  }

  delete(key: string): Promise<void> {
    if (!this.records.delete(key)) return Promise.resolve();
    return this.flush();
  }

  private flush(): Promise<void> {
    const next = this.writing.catch(() => {}).then(() => this.write());
    this.writing = next;
    return next;
  }

  private async write(): Promise<void> {
    const body = JSON.stringify(Object.fromEntries([...this.records].sort(([a], [b]) => (a < b ? -1 : 1))), null, 2);
    await mkdir(dirname(this.file), { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.${randomBytes(4).toString('hex')}.tmp`;
    const h = await open(tmp, 'wx', 0o600);
    try {
      await h.writeFile(body + '\n');
      await h.sync();
    } finally {
      await h.close();
    }
    await rename(tmp, this.file);
  }
}

/**
 * The temporary files of writes a kill -9 interrupted (FILE.<hex>.tmp, see write): read at start,
 * before this process writes any, so none is in flight. Only regular files of that name go.
 */
function removeLeftovers(file: string): void {
  const pattern = new RegExp(`^${basename(file).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.[0-9a-f]+\\.tmp$`);
  let names: string[];
  try {
    names = readdirSync(dirname(file));
  } catch {
    return;
  }
  for (const name of names) {
    if (!pattern.test(name)) continue;
    const path = join(dirname(file), name);
    try {
      if (lstatSync(path).isFile()) unlinkSync(path);
    } catch {
      // gone meanwhile, or not ours to remove: it stays
    }
  }
}
