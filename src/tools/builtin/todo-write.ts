import { TOOL_TIMEOUTS } from '../../contracts/defaults.js';
import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import type { ValidationOutcome } from '../define-tool.js';
import { resolveLimit } from '../limits.js';

export const todoStatuses = ['pending', 'in_progress', 'completed'] as const;

// Items are not strict: a key from another CLI's todo shape (`priority`) is dropped, not refused.
const todoItemSchema = z.object({
  content: z.string().min(1).describe('What is to be done, in the imperative ("Run the tests")'),
  status: z.enum(todoStatuses),
  activeForm: z
    .string()
    .min(1)
    .optional()
    .describe('The same task in the present continuous ("Running the tests"), shown while it is in progress'),
  id: z.string().optional(),
});
export type TodoItem = z.infer<typeof todoItemSchema>;

const todoWriteInputSchema = z.strictObject({
  todos: z.array(todoItemSchema).describe('The whole updated todo list; it replaces the previous one'),
});

/** `3 todos: 1 completed, 1 in progress, 1 pending`. */
export function summarizeTodos(todos: readonly TodoItem[]): string {
  const count = (status: TodoItem['status']): number => todos.filter((todo) => todo.status === status).length;
  if (todos.length === 0) return '0 todos: the list is empty';
  const noun = todos.length === 1 ? 'todo' : 'todos';
  return `${todos.length} ${noun}: ${count('completed')} completed, ${count('in_progress')} in progress, ${count('pending')} pending`;
}

/** Why a todo list is too large to keep in session state (`LIMITS.todoMaxItems`, `LIMITS.todoMaxChars`), or undefined. */
function todoListSizeProblem(todos: readonly TodoItem[]): ValidationOutcome | undefined {
  const maxItems = resolveLimit('todoMaxItems');
  if (todos.length > maxItems) {
    return {
      ok: false,
      message: `The todo list has ${todos.length} items; at most ${maxItems} are allowed (SWITCHYARD_TODO_MAX_ITEMS). Merge or remove items and send the whole list again.`,
      errorCode: 'todo_list_too_large',
    };
  }
  const maxChars = resolveLimit('todoMaxChars');
  const chars = todos.reduce(
    (sum, todo) => sum + todo.content.length + (todo.activeForm?.length ?? 0) + (todo.id?.length ?? 0),
    0,
  );
  if (chars > maxChars) {
    return {
      ok: false,
      message: `The todo list holds ${chars.toLocaleString('en-US')} characters of text; at most ${maxChars.toLocaleString('en-US')} are allowed (SWITCHYARD_TODO_MAX_CHARS). Shorten the items and send the whole list again.`,
      errorCode: 'todo_list_too_large',
    };
  }
  return undefined;
}

/**
 * Replaces the session's todo list (session state key `todos`). It changes only session state: declared
 * read-only (no approval), but exclusive, so the list a later call sees is the one an earlier call wrote. The list
 * rides along in every later activity input, so its size is capped (see `todoListSizeProblem`).
 */
export const todoWriteTool = defineTool({
  name: 'TodoWrite',
  description:
    'Replaces the todo list of this session with the given items, to plan and track multi-step work. ' +
    'Send the whole list each time; at most one item may be in_progress.',
  inputSchema: todoWriteInputSchema,
  concurrentSafe: false,
  readOnly: true,
  sideEffectScope: 'session',
  idempotent: true,
  timeout: TOOL_TIMEOUTS.TodoWrite,
  summarize: (input) => summarizeTodos(input.todos),
  validateInput(input) {
    const tooLarge = todoListSizeProblem(input.todos);
    if (tooLarge !== undefined) return tooLarge;
    const active = input.todos.filter((todo) => todo.status === 'in_progress');
    if (active.length > 1) {
      return {
        ok: false,
        message: `At most one todo may be in_progress at a time; ${active.length} are: ${active.map((todo) => JSON.stringify(todo.content)).join(', ')}`,
        errorCode: 'multiple_in_progress',
      };
    }
    return { ok: true };
  },
  execute(input) {
    return Promise.resolve({
      content:
        `Todos have been modified successfully. ${summarizeTodos(input.todos)}. ` +
        'Keep using the todo list to track your progress, and proceed with the current tasks if applicable.',
      sessionState: { todos: input.todos },
    });
  },
});
