/**
 * What Write and Edit check with the file system: protected paths through symlinks (at Prepare), and the path again
 * at execution, when the file is opened.
 *
 * Execution re-check: the path was confined before approval (`checkToolPath`), but a symlink swapped in
 * meanwhile — the parent directory or the file itself replaced by a link to `~/.ssh` — would redirect the write.
 * So `openConfinedFile` resolves the path again, requires it to lead inside cwd (or, for a path outside cwd that an
 * allow rule named, to contain no symlink at all: the rules are not known here), opens the file without following
 * a symlink (`O_NOFOLLOW`), and checks the opened file's real path (`/proc/self/fd`) before reading or writing a
 * byte. A swap makes the call fail with `path_changed` and nothing outside is read or written.
 * Left: a swap of a missing directory between the check and `mkdir` can create empty directories outside before
 * the call fails; hard links to a file outside are written in place (a link cannot be told from the file).
 */
import { constants } from 'node:fs';
import { lstat, mkdir, open, realpath, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { PermissionFacts } from '../../contracts/call-plan.js';
import { ToolUseError } from '../define-tool.js';
import { deniedRealPath, descriptorPath, isInside, realPathFacts, realPathOfDeepestExisting } from '../paths.js';
import { protectedPathMatch } from './protected-paths.js';

/** A `strongAsk` when a write to `absolutePath` — as written or through its symlinks — lands on a protected path. */
export async function protectedWriteFacts(options: {
  cwd: string;
  absolutePath: string;
  home?: string;
}): Promise<PermissionFacts> {
  const home = options.home ?? os.homedir();
  const [realPath, realCwd, realHome] = await Promise.all([
    realPathOfDeepestExisting(options.absolutePath),
    realPathOfDeepestExisting(path.resolve(options.cwd)),
    realPathOfDeepestExisting(path.resolve(home)),
  ]);
  const reason =
    protectedPathMatch({ absolutePath: realPath, cwd: realCwd, home: realHome }) ??
    protectedPathMatch({ absolutePath: options.absolutePath, cwd: options.cwd, home });
  return {
    ...(reason === undefined ? {} : { strongAsk: { reason } }),
    ...(await realPathFacts(options.cwd, options.absolutePath)),
  };
}

/** The file a Write or Edit call changes, opened after its path was checked again. */
export interface ConfinedFile {
  /** The real path: what is read and written. */
  readonly path: string;
  /** The existing regular file, open for reading and writing; undefined when there is none yet. */
  readonly handle: FileHandle | undefined;
  /** Replaces the content in place (inode, mode and links kept), or creates the file and its directories. */
  write(content: string): Promise<void>;
  close(): Promise<void>;
}

function pathChanged(filePath: string, detail: string): ToolUseError {
  return new ToolUseError(`${filePath} changed after it was checked: ${detail}. Nothing was written.`, 'path_changed');
}

/** Refuses the opened file unless it is the one that was checked (Linux: `/proc/self/fd`; elsewhere its parent). */
async function verifyOpened(options: {
  handle: FileHandle;
  expectedPath: string;
  filePath: string;
  created: boolean;
}): Promise<void> {
  const { handle, expectedPath } = options;
  let opened = descriptorPath(handle);
  if (opened === undefined) {
    const parent = path.dirname(expectedPath);
    opened = path.join(await realpath(parent).catch(() => parent), path.basename(expectedPath));
  }
  if (opened === expectedPath) return;
  await handle.close();
  // Created through a swapped directory: remove the empty file again.
  if (options.created) await unlink(opened).catch(() => undefined);
  throw pathChanged(options.filePath, `it now leads to ${opened}`);
}

/**
 * Writes `content` over the file in place: the new bytes first, then the cut to their length. A worker killed in
 * between leaves the old text, or the new text (followed by the old tail when the old text was longer), never an
 * empty file: cutting first and writing after lost the whole file to a kill that came between the two.
 */
async function writeAll(handle: FileHandle, content: string): Promise<void> {
  const bytes = Buffer.from(content, 'utf8');
  for (let offset = 0; offset < bytes.length;) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset, offset);
    offset += bytesWritten;
  }
  await handle.truncate(bytes.length);
}

/**
 * Opens the file at `filePath` (absolute, as approved) for a Write or Edit, checking its path again first; see the
 * module comment. Throws a `ToolUseError`: `path_changed` after a swap, `is_directory`, `not_a_file`.
 */
export async function openConfinedFile(options: {
  cwd: string;
  filePath: string;
  toolName?: string;
  denyRules?: readonly string[];
}): Promise<ConfinedFile> {
  const { filePath } = options;
  const denied = await deniedRealPath({
    cwd: options.cwd,
    toolName: options.toolName ?? 'Write',
    absolutePath: filePath,
    denyRules: options.denyRules ?? [],
  });
  if (denied !== undefined)
    throw pathChanged(filePath, `it now leads to ${denied.realPath}, which the rule ${denied.rule} denies`);
  const cwd = path.resolve(options.cwd);
  const realCwd = await realpath(cwd).catch(() => cwd);
  const realPath = await realPathOfDeepestExisting(filePath);
  if (isInside(cwd, filePath) || isInside(realCwd, filePath)) {
    if (!isInside(realCwd, realPath))
      throw pathChanged(
        filePath,
        `it now leads to ${realPath}, outside the session's working directory ${options.cwd}`,
      );
  } else if (realPath !== filePath) {
    // Outside cwd, an allow rule named this path; the rules are not known here, so no symlink may redirect it.
    throw pathChanged(filePath, `it now leads through a symlink to ${realPath}; name the real path`);
  }

  const info = await lstat(realPath).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
    throw error;
  });
  if (info?.isSymbolicLink() === true)
    throw pathChanged(filePath, `${realPath} is a symlink that leads nowhere or was swapped in`);
  if (info?.isDirectory() === true) throw new ToolUseError(`${filePath} is a directory, not a file`, 'is_directory');
  if (info !== undefined && !info.isFile()) throw new ToolUseError(`${filePath} is not a regular file`, 'not_a_file');

  if (info === undefined) {
    return {
      path: realPath,
      handle: undefined,
      async write(content) {
        const parent = path.dirname(realPath);
        try {
          await mkdir(parent, { recursive: true });
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === 'ENOTDIR' || code === 'EEXIST')
            throw new ToolUseError(`Cannot write ${filePath}: a parent of it is not a directory`, 'not_a_directory');
          throw error;
        }
        const realParent = await realpath(parent);
        if (realParent !== parent) throw pathChanged(filePath, `its directory now leads to ${realParent}`);
        let handle: FileHandle;
        try {
          handle = await open(
            realPath,
            constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
            0o666,
          );
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'EEXIST')
            throw pathChanged(filePath, 'a file or symlink appeared there');
          throw error;
        }
        await verifyOpened({ handle, expectedPath: realPath, filePath, created: true });
        try {
          await writeAll(handle, content);
        } finally {
          await handle.close();
        }
      },
      close: () => Promise.resolve(),
    };
  }

  let handle: FileHandle;
  try {
    // O_NONBLOCK: a FIFO swapped in after the lstat must not block the open.
    handle = await open(realPath, constants.O_RDWR | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw pathChanged(filePath, `${realPath} was replaced by a symlink`);
    if (code === 'EISDIR') throw new ToolUseError(`${filePath} is a directory, not a file`, 'is_directory');
    throw error;
  }
  await verifyOpened({ handle, expectedPath: realPath, filePath, created: false });
  if (!(await handle.stat()).isFile()) {
    await handle.close();
    throw new ToolUseError(`${filePath} is not a regular file`, 'not_a_file');
  }
  return { path: realPath, handle, write: (content) => writeAll(handle, content), close: () => handle.close() };
}
