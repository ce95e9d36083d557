import { bashTool } from './builtin/bash.js';
import { taskOutputTool, taskStopTool } from './background/background-task-tools.js';
import type { Tool } from './define-tool.js';
import { editTool } from './builtin/edit.js';
import { globTool } from './builtin/glob.js';
import { grepTool } from './builtin/grep.js';
import { readTool } from './builtin/read.js';
import { submitResultTool } from './builtin/submit-result.js';
import { todoWriteTool } from './builtin/todo-write.js';
import { webFetchTool } from './builtin/web-fetch.js';
import { writeTool } from './builtin/write.js';

/** The tools every worker offers unless told otherwise: Claude Code's names and input fields. */
export function builtinTools(): Tool[] {
  return [
    readTool,
    writeTool,
    editTool,
    globTool,
    grepTool,
    bashTool,
    taskOutputTool,
    taskStopTool,
    webFetchTool,
    todoWriteTool,
    submitResultTool,
  ];
}
