import { readlinkSync, realpathSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { PermissionFacts } from '../contracts/call-plan.js';
import { parseRule, ruleMatches } from '../contracts/permission-rules.js';

/** Resolves a path's real path (`fs.promises.realpath`, or a remembered answer of it: see `rememberRealPaths`). */
export type RealPath = (path: string) => Promise<string>;

/**
 * A `realpath` that answers each path once: for the validation and the permission facts of the calls of one Prepare
 * that runs no PreToolUse hook, so nothing of the session's own runs between the answers (test/unit/paths.test.ts).
 */
export function rememberRealPaths(): RealPath {
  const answers = new Map<string, Promise<string>>();
  return (target) => {
    let answer = answers.get(target);
    if (answer === undefined) {
      answer = realpath(target);
      answers.set(target, answer);
    }
    return answer;
  };
}

/** Absolute path of a tool's path argument: absolute as given, or relative to the session's cwd. */
export function resolveToolPath(cwd: string, filePath: string): string {
  return path.resolve(cwd, filePath);
}

export function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/**
 * Why a path may not be used by a file tool, or undefined when it may: it must lie inside cwd, and so must the
 * file a symlink leads to (the deepest existing ancestor is resolved for paths that do not exist yet).
 */
export async function pathEscapeReason(
  cwd: string,
  absolutePath: string,
  realPath: RealPath = realpath,
): Promise<string | undefined> {
  // The cwd is resolved synchronously (see `realCwd`); only the path takes a trip through libuv's thread pool.
  const root = realCwd(path.resolve(cwd));
  const real = await realPathOfDeepestExisting(absolutePath, realPath);
  if (!isInside(path.resolve(cwd), absolutePath) && !isInside(root, absolutePath)) {
    return `Path ${absolutePath} is outside the session's working directory ${cwd}`;
  }
  if (!isInside(root, real)) {
    return `Path ${absolutePath} leads outside the session's working directory ${cwd} (through a symlink, to ${real})`;
  }
  return undefined;
}

/** The real path of `absolutePath`: its deepest existing ancestor resolved, the missing rest appended. */
export async function realPathOfDeepestExisting(absolutePath: string, realPath: RealPath = realpath): Promise<string> {
  let current = absolutePath;
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(await realPath(current), ...rest);
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return absolutePath;
      rest.unshift(path.basename(current));
      current = parent;
    }
  }
}

/** A path's subject for the permission rules of `toolName`. */
function pathSubject(toolName: string, content: string, cwd: string) {
  return { toolName, content, contentKind: 'path' as const, cwd };
}

/**
 * Whether an allow rule of `toolName` names every one of `paths` explicitly with an absolute pattern (what opens a
 * path outside cwd; a whole-tool rule does not).
 */
function namedByAbsoluteAllowRule(options: {
  cwd: string;
  toolName: string;
  allowRules: readonly string[];
  paths: readonly string[];
}): boolean {
  return options.allowRules.some((text) => {
    try {
      const rule = parseRule(text);
      if (rule.toolName !== options.toolName || rule.content === undefined || !/^\/\/?/.test(rule.content))
        return false;
      return options.paths.every((content) => ruleMatches(rule, pathSubject(options.toolName, content, options.cwd)));
    } catch {
      return false;
    }
  });
}

/** The first of `denyRules` (of `toolName`, or covering it) that names `realPath` or a folder above it. */
function denyingRule(options: {
  cwd: string;
  toolName: string;
  realPath: string;
  denyRules: readonly string[];
}): string | undefined {
  const subject = pathSubject(options.toolName, options.realPath, options.cwd);
  return options.denyRules.find((text) => {
    try {
      return ruleMatches(parseRule(text), subject, { beneath: true });
    } catch {
      // The session's rules were checked when it started; an unparsable one names nothing.
      return false;
    }
  });
}

/** A real path as rules see it: inside the real cwd (`realRoot`), spelled under the session's cwd (`root`). */
function spelledUnderCwd(real: string, root: string, realRoot: string): string {
  if (real === realRoot) return root;
  return real.startsWith(`${realRoot}/`) ? path.join(root, real.slice(realRoot.length)) : real;
}

/**
 * Why a file tool may not use a path, or undefined when it may: inside cwd (symlinks included), or outside it only
 * when an allow rule of this tool names the path explicitly with an absolute pattern (`Read(/etc/hosts)`,
 * `Write(/tmp/**)`); a whole-tool rule (`Read`) does not open paths outside cwd.
 */
export async function checkToolPath(options: {
  cwd: string;
  toolName: string;
  absolutePath: string;
  allowRules: readonly string[];
  realPath?: RealPath;
}): Promise<string | undefined> {
  const reason = await pathEscapeReason(options.cwd, options.absolutePath, options.realPath);
  if (reason === undefined) return undefined;
  const real = await realPathOfDeepestExisting(options.absolutePath, options.realPath);
  const allowed = namedByAbsoluteAllowRule({ ...options, paths: [options.absolutePath, real] });
  return allowed ? undefined : reason;
}

/**
 * What every tool with a `file_path` input shares: rules and the Web UI see the path, and the path is resolved
 * against the session's cwd before hooks, rules, the approver and the handler see it.
 */
export const filePathToolFields = {
  ruleKind: 'path' as const,
  ruleContent: (input: { file_path: string }): string => input.file_path,
  summarize: (input: { file_path: string }): string => input.file_path,
  resolveInput: <Input extends { file_path: string }>(input: Input, context: { cwd: string }): Input => ({
    ...input,
    file_path: resolveToolPath(context.cwd, input.file_path),
  }),
};

/**
 * The file a path really reaches, as rules see it: symlinks resolved, and a real path inside the real cwd spelled
 * under the session's cwd (rules are written against it).
 */
export async function realPathAsSeenByRules(
  cwd: string,
  absolutePath: string,
  realPath: RealPath = realpath,
): Promise<string> {
  const root = path.resolve(cwd);
  const realRoot = realCwd(root);
  const real = await realPathOfDeepestExisting(absolutePath, realPath);
  return spelledUnderCwd(real, root, realRoot);
}

/** `{ realPath }` when a file tool's path leads elsewhere through a symlink (see `PermissionFacts.realPath`). */
export async function realPathFacts(
  cwd: string,
  absolutePath: string,
  resolve: RealPath = realpath,
): Promise<PermissionFacts> {
  const realPath = await realPathAsSeenByRules(cwd, absolutePath, resolve);
  return realPath === absolutePath ? {} : { realPath };
}

/**
 * At execution: the rule among `denyRules` (of `toolName`, or covering it) that the path's real target matches now,
 * if any. A directory swapped for a link to a denied place after approval is refused here.
 */
export async function deniedRealPath(options: {
  cwd: string;
  toolName: string;
  absolutePath: string;
  denyRules: readonly string[];
}): Promise<{ rule: string; realPath: string } | undefined> {
  if (options.denyRules.length === 0) return undefined;
  const realPath = await realPathAsSeenByRules(options.cwd, options.absolutePath);
  const rule = denyingRule({ ...options, realPath });
  return rule === undefined ? undefined : { rule, realPath };
}

/**
 * Where the descriptor `handle` has open leads (Linux: its `/proc/self/fd` link), or undefined where there is no
 * /proc. Read synchronously: /proc answers from memory, and an asynchronous call would cost the worker's thread
 * several times the read itself (a trip through libuv's thread pool).
 */
export function descriptorPath(handle: FileHandle): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${handle.fd}`);
  } catch {
    return undefined;
  }
}

/** The real path of the file `handle` has open: `descriptorPath`, else `filePath` resolved again. */
export async function realPathOfOpenFile(handle: FileHandle, filePath: string): Promise<string> {
  return descriptorPath(handle) ?? (await realpath(filePath));
}

/**
 * The real path of a session's cwd (`root`, absolute), or `root` itself when it cannot be resolved. Resolved
 * synchronously: the cwd is the session's, set by whoever started it, never a path from a call's input, and
 * resolving it costs a few system calls where a trip through libuv's thread pool would cost the worker's thread
 * several times that and the call a wait.
 */
export function realCwd(root: string): string {
  try {
    return realpathSync.native(root);
  } catch {
    return root;
  }
}

/** Why a reading tool may not read the file it opened. */
export interface OpenFileProblem {
  message: string;
  errorCode: 'path_escape' | 'denied_by_rule';
}

/**
 * At execution, on the file a reading tool has open (its real path from `realPathOfOpenFile`): why it may not be
 * read, or undefined. As at validation, it must lie inside the real cwd unless an allow rule of this tool names it
 * explicitly with an absolute pattern, and no deny rule may name it. Validation alone cannot hold this: a link
 * retargeted after it (by a PreToolUse hook, or by a process the session started) would lead the read elsewhere.
 * `realRoot` is the cwd's real path when the caller has it (`realCwd`): a tool that judges many files in one call
 * resolves it once.
 */
export function openFileProblem(options: {
  cwd: string;
  realRoot?: string;
  toolName: string;
  requestedPath: string;
  openedPath: string;
  allowRules: readonly string[];
  denyRules: readonly string[];
}): OpenFileProblem | undefined {
  const root = path.resolve(options.cwd);
  const realRoot = options.realRoot ?? realCwd(root);
  const { openedPath, toolName } = options;
  const realPath = spelledUnderCwd(openedPath, root, realRoot);
  const rule = denyingRule({ ...options, realPath });
  if (rule !== undefined)
    return {
      message: `${toolName} cannot read ${options.requestedPath}: it leads to ${realPath}, which the rule ${rule} denies`,
      errorCode: 'denied_by_rule',
    };
  if (isInside(realRoot, openedPath) || namedByAbsoluteAllowRule({ ...options, paths: [openedPath] })) return undefined;
  return {
    message: `Path ${options.requestedPath} leads outside the session's working directory ${options.cwd} (through a symlink, to ${openedPath})`,
    errorCode: 'path_escape',
  };
}
