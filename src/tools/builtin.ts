import { bashTool } from './bash.js';
import { taskOutputTool, taskStopTool } from './background-tasks.js';
import type { Tool } from './define-tool.js';
import { editTool } from './edit.js';
import { globTool } from './glob.js';
import { grepTool } from './grep.js';
import { readTool } from './read.js';
import { submitResultTool } from './submit-result.js';
import { todoWriteTool } from './todo-write.js';
import { webFetchTool } from './web-fetch.js';
import { writeTool } from './write.js';

/** The tools every worker offers unless told otherwise: Claude Code's names and input fields. */
export function builtinTools(): Tool[] {
  return [readTool, writeTool, editTool, globTool, grepTool, bashTool, taskOutputTool, taskStopTool, webFetchTool, todoWriteTool, submitResultTool];
}
