// CPU time of a process tree (Linux /proc), so a benchmark can report what a unit of work costs each process
// (the worker's workerd, wrangler's proxy, this client) instead of inferring it from throughput alone.
import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ; 100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * CPU ms (user + system) of `rootPid` and each descendant, keyed `name:pid`, and of its busiest thread, keyed
 * `name:pid:busiest` (a saturated thread is the bottleneck whatever the process total); empty without /proc.
 */
export function treeCpu(rootPid) {
  const stats = readStats("/proc");
  const cpu = {};
  for (const pid of descendants(stats, rootPid)) {
    const key = `${stats.get(pid).name}:${pid}`;
    cpu[key] = stats.get(pid).cpuMs;
    for (const [tid, thread] of readStats(`/proc/${pid}/task`)) cpu[`${key}:thread${tid}`] = thread.cpuMs;
  }
  return cpu;
}

/** The CPU ms each process and its busiest thread spent between two `treeCpu` samples (idle ones left out). */
export function cpuSpent(before, after) {
  const spent = {};
  for (const [key, ms] of Object.entries(after)) {
    const delta = ms - (before[key] ?? 0);
    const [name, pid, thread] = key.split(":");
    if (!thread) {
      if (delta > 0) spent[`${name}:${pid}`] = delta;
    } else if (delta > (spent[`${name}:${pid}:busiest`] ?? 0)) {
      spent[`${name}:${pid}:busiest`] = delta;
    }
  }
  return spent;
}

function readStats(directory) {
  const stats = new Map();
  let pids = [];
  try {
    pids = readdirSync(directory).filter((entry) => /^\d+$/.test(entry));
  } catch {
    return stats;
  }
  for (const pid of pids) {
    try {
      const text = readFileSync(`${directory}/${pid}/stat`, "utf8");
      // The name is in parentheses and may contain spaces: the fields after it are split from its end.
      const close = text.lastIndexOf(")");
      const name = text.slice(text.indexOf("(") + 1, close);
      const fields = text.slice(close + 2).split(" ");
      const [ppid, utime, stime] = [Number(fields[1]), Number(fields[11]), Number(fields[12])];
      stats.set(Number(pid), { name, ppid, cpuMs: ((utime + stime) * 1000) / TICKS_PER_SECOND });
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return stats;
}

function descendants(stats, rootPid) {
  const found = [rootPid];
  for (let i = 0; i < found.length; i++) {
    for (const [pid, stat] of stats) if (stat.ppid === found[i]) found.push(pid);
  }
  return found.filter((pid) => stats.has(pid));
}
