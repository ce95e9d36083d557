/**
 * Sends `signal` to the process group `pid` leads (a child started with `detached: true` leads its own group), so a
 * shell's pipelines and children get it too. A group that is gone already, or no pid (a child that never started), is
 * not an error.
 */
export function signalProcessGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is gone already.
  }
}
