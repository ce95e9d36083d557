/**
 * The bubblewrap command line for one sandboxed process: pure, so every rule of the sandbox can be read here and
 * unit-tested without running anything. The impure part (which paths exist, which are files) is in
 * `sandbox-paths.ts`.
 *
 * Mount order is the policy (a later mount covers an earlier one):
 * 1. the whole file system read-only, a fresh /dev and /proc, a private empty /tmp;
 * 2. `masked` areas (Switchyard's data directory, /run with its daemon sockets) as empty read-only folders;
 * 3. `exposed` paths read-only again on top of them (the session's own background-task folder);
 * 4. `writable` paths (cwd, `allowWrite`) read-write;
 * 5. `pinned` folders inside them bound read-write onto themselves: a mount point cannot be renamed or removed, so a
 *    folder git looks into (a submodule's) stays where git looks;
 * 6. `readOnly` paths inside them (protected paths: the whole `.git` folder, `.switchyard`, …) read-only, each a mount
 *    point of its own (so `mv .git` fails, and nothing inside it can be created, changed or removed);
 * 7. `placeholders`: protected paths that do not exist yet (`.git`, `.switchyard`, `.claude` in cwd) as empty
 *    read-only folders, so a command cannot create them. bubblewrap makes each mount point on the host: an empty
 *    folder, which git, Switchyard and Claude Code all read as "nothing there";
 * 8. `hidden` paths (credentials in the home directory, system secrets, other users' homes, key files, `Read(...)`
 *    deny rules, `denyRead`) as empty: a folder becomes an empty read-only folder, a file is `/dev/null` (reads as
 *    empty, a write goes nowhere);
 * 9. the network proxy's socket folder, when the session allows some hosts.
 * Then every namespace is new (user, pid, ipc, uts, cgroup, and net: only loopback inside), no capabilities, a new
 * session (no terminal to inject keystrokes into), and the sandbox dies with the process that started it.
 */

export type SandboxPathKind = 'file' | 'directory';

export interface SandboxPath {
  path: string;
  kind: SandboxPathKind;
}

export interface BubblewrapPlan {
  /** The working directory inside the sandbox (writable unless listed otherwise). */
  cwd: string;
  /** Read-write paths (cwd first, then `allowWrite`); absolute, existing. */
  writable: readonly string[];
  /** Areas hidden as empty folders before the writable binds (so a cwd inside one still works). */
  masked: readonly string[];
  /** Paths inside a masked area bound read-only again (existing folders). */
  exposed: readonly string[];
  /** Existing folders inside writable ones bound read-write onto themselves (they cannot be renamed). */
  pinned?: readonly string[];
  /** Existing paths inside writable ones that stay read-only. */
  readOnly: readonly string[];
  /** Paths inside writable ones that do not exist yet and must not be created: empty read-only folders. */
  placeholders?: readonly string[];
  /** Existing paths that read as empty. */
  hidden: readonly SandboxPath[];
  /** `none`: loopback only; `proxy`: the folder holding the host proxy's unix socket is bound in, read-only. */
  network: { kind: 'none' } | { kind: 'proxy'; socketDirectory: string };
}

/** bubblewrap's options for `plan`, to be followed by `--` and the command's argv. */
export function bubblewrapArguments(plan: BubblewrapPlan): string[] {
  const args = [
    '--unshare-user',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--unshare-net',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--tmpfs',
    '/tmp',
  ];
  // Empty folders are made read-only last: the binds after them may need mount points inside them.
  const emptied: string[] = [];
  for (const area of plan.masked) {
    args.push('--tmpfs', area);
    emptied.push(area);
  }
  for (const path of plan.exposed) args.push('--ro-bind', path, path);
  for (const path of plan.writable) args.push('--bind', path, path);
  for (const path of plan.pinned ?? []) args.push('--bind', path, path);
  for (const path of plan.readOnly) args.push('--ro-bind', path, path);
  for (const path of plan.placeholders ?? []) {
    args.push('--tmpfs', path);
    emptied.push(path);
  }
  for (const entry of plan.hidden) {
    if (entry.kind === 'directory') {
      args.push('--tmpfs', entry.path);
      emptied.push(entry.path);
    } else {
      // `--dev-bind`: bubblewrap's other binds forbid device files, so a `/dev/null` bound with them fails every open
      // (git stops at a `~/.gitconfig` it may not read); this one reads as empty and swallows writes.
      args.push('--dev-bind', '/dev/null', entry.path);
    }
  }
  if (plan.network.kind === 'proxy') args.push('--ro-bind', plan.network.socketDirectory, plan.network.socketDirectory);
  for (const area of emptied) args.push('--remount-ro', area);
  args.push('--chdir', plan.cwd);
  return args;
}

/** Resource limits applied inside the sandbox, before the command runs. */
export interface SandboxLimits {
  /** Address space of each process (RLIMIT_AS), bytes. */
  memoryBytes: number;
  /** Processes of the sandbox (RLIMIT_NPROC in the sandbox's own user namespace; a pids cgroup where the worker has one). */
  processes: number;
  /** Largest file a process may write (RLIMIT_FSIZE), bytes. */
  fileBytes: number;
  /** CPU time of each process (RLIMIT_CPU), seconds. */
  cpuSeconds: number;
}

/**
 * The shell that sets `limits` and then runs its remaining arguments: `bash -c LIMITS_SCRIPT name mem procs file cpu
 * argv…`. Plain `ulimit` sets the hard and the soft limit, so the command cannot raise them again.
 */
const LIMITS_SCRIPT =
  'ulimit -v "$1" && ulimit -u "$2" && ulimit -f "$3" && ulimit -t "$4" || exit 126; shift 4; exec "$@"';

/** The argv that runs `command` (an argv) under `limits`, inside the sandbox. */
export function limitedCommand(options: { limits: SandboxLimits; command: readonly string[] }): string[] {
  const { limits } = options;
  return [
    '/bin/bash',
    '-c',
    LIMITS_SCRIPT,
    'switchyard-sandbox',
    String(Math.max(1, Math.floor(limits.memoryBytes / 1024))),
    String(Math.max(1, Math.floor(limits.processes))),
    // bash counts `ulimit -f` in 1024-byte blocks (outside POSIX mode).
    String(Math.max(1, Math.ceil(limits.fileBytes / 1024))),
    String(Math.max(1, Math.floor(limits.cpuSeconds))),
    ...options.command,
  ];
}

/**
 * Where a pids cgroup limits the processes (a root worker), one shell outside the sandbox does everything before
 * bubblewrap starts: it joins the cgroup and sets the other limits, which bubblewrap and the command inherit. `ulimit
 * -u` is left out: it would count the worker user's processes outside the sandbox's user namespace.
 */
const CGROUP_LIMITS_SCRIPT =
  'echo $$ > "$1" && ulimit -v "$2" && ulimit -f "$3" && ulimit -t "$4" || exit 126; shift 4; exec "$@"';

/** The argv that joins the cgroup whose `cgroup.procs` is `procsFile`, sets `limits` and runs `command` (bubblewrap's argv). */
export function cgroupLimitedCommand(options: {
  procsFile: string;
  limits: SandboxLimits;
  command: readonly string[];
}): string[] {
  const { limits } = options;
  return [
    '/bin/bash',
    '-c',
    CGROUP_LIMITS_SCRIPT,
    'switchyard-sandbox',
    options.procsFile,
    String(Math.max(1, Math.floor(limits.memoryBytes / 1024))),
    String(Math.max(1, Math.ceil(limits.fileBytes / 1024))),
    String(Math.max(1, Math.floor(limits.cpuSeconds))),
    ...options.command,
  ];
}
