/**
 * Who a process is, well enough to tell whether a lock's holder still runs: its pid is not enough
 * (pids are reused, and a container's main process is often pid 1 after every restart), so a
 * holder is recorded with the kernel's boot id, its pid namespace and its start time in clock
 * ticks since boot. None of these depend on a wall clock. Where they cannot be read (not Linux, or
 * a restricted /proc), they are absent and the lock falls back to watching for a heartbeat.
 */
import { readFile, readlink } from 'node:fs/promises';
import { hostname } from 'node:os';

export interface ProcessIdentity {
  pid: number;
  hostname: string;
  /** The user it runs as, where the platform has one. */
  uid?: number;
  /** `/proc/sys/kernel/random/boot_id`: differs after every reboot. */
  bootId?: string;
  /** `/proc/self/ns/pid`: pids are comparable only inside one namespace. */
  pidNamespace?: string;
  /** Field 22 of `/proc/<pid>/stat`: the start time in clock ticks since boot. */
  startTicks?: string;
}

type ProcessState = { running: false } | { running: true; startTicks?: string };

/** What the lock needs to know about processes; the real one reads /proc, tests pass their own. */
export interface ProcessProbe {
  self(): Promise<ProcessIdentity>;
  /** Whether `pid` runs in this pid namespace (a zombie does not), and since when. */
  state(pid: number): Promise<ProcessState>;
}

const readTrimmed = (path: string): Promise<string | undefined> =>
  readFile(path, 'utf8').then(
    (text) => text.trim() || undefined,
    () => undefined,
  );

/** `/proc/<pid>/stat` → state letter and start ticks (the command name in parentheses may hold anything). */
const statOf = async (pid: number): Promise<{ state: string; startTicks: string } | undefined> => {
  const text = await readTrimmed(`/proc/${pid}/stat`);
  const rest = text?.slice(text.lastIndexOf(')') + 2).split(' ');
  // After "pid (comm) ": state is field 3, starttime field 22, so index 0 and 19 here.
  if (!rest?.[0] || !rest[19]) return undefined;
  return { state: rest[0], startTicks: rest[19] };
};

export const systemProcessProbe: ProcessProbe = {
  self: async () => {
    const [bootId, pidNamespace, stat] = await Promise.all([
      readTrimmed('/proc/sys/kernel/random/boot_id'),
      readlink('/proc/self/ns/pid').catch(() => undefined),
      statOf(process.pid),
    ]);
    return {
      pid: process.pid,
      hostname: hostname(),
      ...(typeof process.getuid === 'function' ? { uid: process.getuid() } : {}),
      ...(bootId ? { bootId } : {}),
      ...(pidNamespace ? { pidNamespace } : {}),
      ...(stat ? { startTicks: stat.startTicks } : {}),
    };
  },
  state: async (pid) => {
    try {
      process.kill(pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return { running: false };
      // EPERM: it runs, as another user.
    }
    const stat = await statOf(pid);
    if (stat?.state === 'Z' || stat?.state === 'X') return { running: false };
    return { running: true, ...(stat ? { startTicks: stat.startTicks } : {}) };
  },
};
