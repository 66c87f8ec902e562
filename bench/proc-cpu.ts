/** CPU time of processes and threads, read from Linux's /proc (the benches' CPU-per-call figures). */
import { readdirSync, readFileSync } from 'node:fs';

/** USER_HZ: 100 on every Linux this runs on (sysconf(_SC_CLK_TCK)). */
const CLOCK_TICKS = 100;

/** CPU time of one thread (utime + stime, µs) from /proc/<pid>/task/<tid>/stat; 0 if unreadable. */
export function threadCpuUs(pid: number, tid: string): number {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at the closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
    return (ticks * 1e6) / CLOCK_TICKS;
  } catch {
    return 0; // a thread that ended between the listing and the read, or no /proc
  }
}

/** CPU time per thread of a process (µs), keyed by thread id; empty where /proc is absent. */
export function processCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) out.set(tid, threadCpuUs(pid, tid));
  return out;
}
