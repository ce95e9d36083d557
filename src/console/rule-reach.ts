import { parseRule, ruleCoversTool } from '../contracts/permission-rules.js';
import { SafeHtml, html } from './html.js';

/**
 * Tools a file rule may cover besides its own (`ruleCoversTool` in src/contracts/permission-rules.ts decides which):
 * an `Edit(...)` rule also covers Write, a `Read(...)` rule Grep and Glob.
 */
const FILE_TOOLS = ['Read', 'Write', 'Edit', 'MultiEdit', 'NotebookEdit', 'NotebookRead', 'Glob', 'Grep', 'LS'];

/** `a`, `a and b`, `a, b and c`. */
function listed(names: readonly string[]): string {
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names.at(-1) ?? ''}`;
}

/** Whether a path rule's content holds glob syntax that is not escaped (a remembered path rule escapes its file's name). */
function hasWildcards(content: string): boolean {
  return /[*?[\]{}()!+@]/.test(content.replace(/\\./g, ''));
}

/**
 * How far a rule reaches, as a person reads it: `Bash(npm test)` is "every Bash `npm test` in this session". The
 * console shows it beside "Always allow", whose remembered rule holds for the rest of the session (never for others).
 */
export function ruleReach(rule: string): SafeHtml {
  let parsed;
  try {
    parsed = parseRule(rule);
  } catch {
    return html`every call the rule <code>${rule}</code> matches in this session`;
  }
  const { toolName, content } = parsed;
  const tools = [toolName, ...FILE_TOOLS.filter((name) => name !== toolName && ruleCoversTool(toolName, name))];
  const names = listed(tools);
  const scope = ' in this session';
  if (content === undefined) {
    // `mcp__server` and `mcp__server__*` name every tool of that server.
    const server = toolName.startsWith('mcp__') ? toolName.slice('mcp__'.length).replace(/__\*$/, '') : undefined;
    if (server !== undefined && server !== '' && !server.includes('__'))
      return html`every tool of the MCP server <code>${server}</code>${scope}`;
    return html`every ${names} call${scope}`;
  }
  if (content.startsWith('domain:'))
    return html`every ${names} of <code>${content.slice('domain:'.length)}</code> and its subdomains${scope}`;
  if (content.endsWith(':*'))
    return html`every ${names} ${toolName === 'Bash' ? 'command' : 'call'} starting with <code>${content.slice(0, -2)}</code>${scope}`;
  if (toolName === 'Bash') return html`every ${names} <code>${content}</code>${scope}`;
  if (FILE_TOOLS.includes(toolName)) {
    return hasWildcards(content)
      ? html`every ${names} of a path matching <code>${content}</code>${scope}`
      : html`every ${names} of <code>${content.replace(/\\(.)/g, '$1')}</code>${scope}`;
  }
  return html`every ${names} call for <code>${content}</code>${scope}`;
}
