/** Whether a process, or with a negative id a process group, still exists (signal 0 probes without signalling). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
