import { bashTool } from './bash.js';
import type { Tool } from './define-tool.js';
import { readTool } from './read.js';

/** The tools every worker offers unless told otherwise. */
export function builtinTools(): Tool[] {
  return [readTool, bashTool];
}
