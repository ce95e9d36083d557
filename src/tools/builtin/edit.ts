/**
 * `Edit { file_path, old_string, new_string, replace_all? }`: exact-string replacement in a text file (Claude
 * Code's Edit).
 *
 * Decisions:
 * - Matching is exact, byte for byte: no quote normalisation and no CRLF/LF translation (a file with `\r\n` line
 *   ends needs `\r\n` in `old_string`). Occurrences are counted without overlap, left to right, as `split` does.
 * - The replacement is literal: `$&`, `$1`… in `new_string` are not patterns.
 * - An empty `old_string` creates the file with `new_string` when it does not exist (parent directories included),
 *   or fills an existing empty file, as Claude Code does; on a non-empty file it is refused.
 * - Binary files (NUL in the first 8 KB) and files over {@link MAX_DIFF_SOURCE_BYTES} (10 MiB) are refused.
 * - The match is checked by `validateInput` and again by `execute` on the file as it is then (it may have changed
 *   in between); a failed re-check is a `ToolUseError`.
 * - As for Write: protected paths always ask (a `strongAsk` fact), and the path is checked again when the file is
 *   opened at execution (`openConfinedFile`), which reads and writes the same open file.
 */
import { z } from 'zod';
import { RESULT_BUDGETS, TOOL_TIMEOUTS } from '../../contracts/defaults.js';
import { ToolUseError, defineTool } from '../define-tool.js';
import type { ValidationOutcome } from '../define-tool.js';
import { createFileDiff } from '../support/file-diff.js';
import { openConfinedFile, protectedWriteFacts } from '../support/file-write-guard.js';
import type { ConfinedFile } from '../support/file-write-guard.js';
import { checkToolPath, filePathToolFields, realPathAsSeenByRules, resolveToolPath } from '../paths.js';
import { MAX_DIFF_SOURCE_BYTES, approvalPreview, readExistingFile, readOpenFile } from './write.js';
import type { ExistingFile } from './write.js';
import { fileReadRecord, requireReadBeforeEdit } from '../support/read-before-edit.js';

const QUOTED_STRING_CHARS = 200;

const editInputSchema = z.strictObject({
  file_path: z.string().min(1).describe('Path of the file to edit, absolute (inside cwd) or relative to cwd'),
  old_string: z
    .string()
    .describe('The exact text to replace; it must occur once unless replace_all is set (empty creates a new file)'),
  new_string: z.string().describe('The text to replace it with (must differ from old_string)'),
  replace_all: z.boolean().optional().describe('Replace every occurrence of old_string (default false)'),
});

type EditInput = z.infer<typeof editInputSchema>;

export type EditPlan = EditedText | { ok: false; message: string; errorCode: string };
export interface EditedText {
  ok: true;
  after: string;
  replacements: number;
}

/** Occurrences of `needle` in `text`, without overlap (`needle` non-empty). */
export function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (let index = text.indexOf(needle); index !== -1; index = text.indexOf(needle, index + needle.length)) count++;
  return count;
}

/** The text after an edit, or why the edit cannot be made (pure). */
export function planEdit(
  before: string,
  input: Pick<EditInput, 'old_string' | 'new_string' | 'replace_all'>,
): EditPlan {
  const { old_string: oldString, new_string: newString } = input;
  if (oldString === newString) {
    return {
      ok: false,
      message: 'No changes to make: old_string and new_string are exactly the same.',
      errorCode: 'no_changes',
    };
  }
  if (oldString === '') {
    if (before !== '')
      return { ok: false, message: 'Cannot create new file - file already exists.', errorCode: 'file_exists' };
    return { ok: true, after: newString, replacements: 1 };
  }
  const count = countOccurrences(before, oldString);
  if (count === 0) {
    const quoted = oldString.length > QUOTED_STRING_CHARS ? `${oldString.slice(0, QUOTED_STRING_CHARS)}…` : oldString;
    return {
      ok: false,
      message: `String to replace not found in file.\nString: ${quoted}`,
      errorCode: 'string_not_found',
    };
  }
  if (count > 1 && input.replace_all !== true) {
    return {
      ok: false,
      message: `Found ${count} matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.`,
      errorCode: 'ambiguous_match',
    };
  }
  if (input.replace_all === true)
    return { ok: true, after: before.split(oldString).join(newString), replacements: count };
  const index = before.indexOf(oldString);
  return {
    ok: true,
    after: before.slice(0, index) + newString + before.slice(index + oldString.length),
    replacements: 1,
  };
}

/** The text to edit, or the refusal: `undefined` text means the file does not exist and `old_string` is empty (a creation). */
function editableText(
  filePath: string,
  existing: ExistingFile,
  oldString: string,
): { ok: true; text: string | undefined } | { ok: false; message: string; errorCode: string } {
  switch (existing.kind) {
    case 'missing':
      return oldString === ''
        ? { ok: true, text: undefined }
        : { ok: false, message: `File does not exist: ${filePath}`, errorCode: 'not_found' };
    case 'directory':
      return { ok: false, message: `${filePath} is a directory, not a file`, errorCode: 'is_directory' };
    case 'special':
      return { ok: false, message: `${filePath} is not a regular file`, errorCode: 'not_a_file' };
    case 'binary':
      return { ok: false, message: `Cannot edit binary file: ${filePath}`, errorCode: 'binary_file' };
    case 'too_large':
      return {
        ok: false,
        message: `File is too large to edit: ${filePath} (${existing.bytes} bytes; the limit is ${MAX_DIFF_SOURCE_BYTES} bytes)`,
        errorCode: 'file_too_large',
      };
    case 'text':
      return { ok: true, text: existing.text };
    default: {
      const exhaustive: never = existing;
      return exhaustive;
    }
  }
}

/** Re-checks the edit on the open file's current text and writes the result through the same handle. */
async function applyEdit(options: {
  file: ConfinedFile;
  filePath: string;
  input: EditInput;
  signal: AbortSignal;
}): Promise<{ created: boolean; before: string; plan: EditedText }> {
  const { file, filePath, input } = options;
  const editable = editableText(
    filePath,
    file.handle === undefined ? { kind: 'missing' } : await readOpenFile(file.handle),
    input.old_string,
  );
  if (!editable.ok) throw new ToolUseError(editable.message, editable.errorCode);
  const before = editable.text ?? '';
  const plan = planEdit(before, input);
  if (!plan.ok)
    throw new ToolUseError(
      `${plan.message}\n(The file changed after the edit was checked; read it again.)`,
      plan.errorCode,
    );
  options.signal.throwIfAborted();
  await file.write(plan.after);
  return { created: editable.text === undefined, before, plan };
}

export const editTool = defineTool({
  name: 'Edit',
  aliases: ['replace', 'edit_file'],
  description:
    'Replaces an exact string in a text file under the session directory (once, or every occurrence with replace_all).',
  inputSchema: editInputSchema,
  concurrentSafe: false,
  readOnly: false,
  sideEffectScope: 'workspace',
  idempotent: false,
  editsFiles: true,
  // Read before edit checks the session's record of the file (`read-before-edit.ts`).
  readsSessionState: true,
  timeout: { defaultMs: TOOL_TIMEOUTS.other.defaultMs },
  resultBudget: RESULT_BUDGETS.Edit,
  ...filePathToolFields,
  async validateInput(input, context): Promise<ValidationOutcome> {
    const filePath = resolveToolPath(context.cwd, input.file_path);
    const escape = await checkToolPath({
      cwd: context.cwd,
      toolName: 'Edit',
      absolutePath: filePath,
      allowRules: context.allowRules,
    });
    if (escape !== undefined) return { ok: false, message: escape, errorCode: 'path_escape' };
    if (input.old_string === input.new_string) {
      return {
        ok: false,
        message: 'No changes to make: old_string and new_string are exactly the same.',
        errorCode: 'no_changes',
      };
    }
    const editable = editableText(filePath, await readExistingFile(filePath), input.old_string);
    if (!editable.ok) return editable;
    const plan = planEdit(editable.text ?? '', input);
    return plan.ok ? { ok: true } : plan;
  },
  async prepareApproval(input, context) {
    const real = await realPathAsSeenByRules(context.cwd, input.file_path);
    const through = real === input.file_path ? '' : `Edits ${real} (${input.file_path} is a symlink to it).\n`;
    const editable = editableText(input.file_path, await readExistingFile(input.file_path), input.old_string);
    if (!editable.ok) throw new ToolUseError(editable.message, editable.errorCode);
    const before = editable.text ?? '';
    const plan = planEdit(before, input);
    if (!plan.ok) throw new ToolUseError(plan.message, plan.errorCode);
    return {
      preview: `${through}${approvalPreview(createFileDiff({ filePath: input.file_path, before, after: plan.after }))}`,
    };
  },
  permissionFacts: (input, context) => protectedWriteFacts({ cwd: context.cwd, absolutePath: input.file_path }),
  async execute(input, context) {
    const filePath = input.file_path;
    await requireReadBeforeEdit(context, filePath);
    const file = await openConfinedFile({ cwd: context.cwd, filePath, toolName: 'Edit', denyRules: context.denyRules });
    const { created, before, plan } = await applyEdit({ file, filePath, input, signal: context.signal }).finally(() =>
      file.close(),
    );
    const display = createFileDiff({ filePath, before, after: plan.after });
    // Claude Code's Edit output for PostToolUse hooks (`tool_response.filePath`…).
    const hookResponse = {
      filePath,
      oldString: input.old_string,
      newString: input.new_string,
      originalFile: before,
      structuredPatch: display.hunks,
      userModified: false,
      replaceAll: input.replace_all === true,
    };
    const sessionState = await fileReadRecord(context, filePath);
    const recorded = sessionState === undefined ? {} : { sessionState };
    if (created) return { content: `File created successfully at: ${filePath}`, display, hookResponse, ...recorded };
    const content =
      input.replace_all === true
        ? `The file ${filePath} has been updated. Replaced ${plan.replacements} occurrence${plan.replacements === 1 ? '' : 's'} of old_string.`
        : `The file ${filePath} has been updated.`;
    return { content, display, hookResponse, ...recorded };
  },
});
