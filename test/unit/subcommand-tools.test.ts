import { z } from 'zod';
import { describe, expect, it, vi } from 'vitest';
import { rememberRuleFor } from '../../src/activities/prepare-call.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { bashRememberRule } from '../../src/tools/shell/index.js';

// One list of the programs that take a subcommand (src/tools/shell/subcommand-tools.ts), read by both rules that
// remember a command prefix: the Bash tool's (remember-rule.ts) and the default for any tool whose rules match a
// command (`rememberRuleFor`). Replaced here by a list of one made-up program: if either user kept a list of its
// own, `zzfrob sub` would not be remembered as a pair, or `git commit` still would.
vi.mock('../../src/tools/shell/subcommand-tools.js', () => ({ SUBCOMMAND_TOOLS: new Set(['zzfrob']) }));

const shellTool = defineTool({
  name: 'Shell',
  description: 'A tool whose rules match a command.',
  inputSchema: z.object({ command: z.string() }),
  ruleKind: 'command',
  ruleContent: (input) => input.command,
  execute: () => Promise.resolve(''),
});

describe('the one list of subcommand-taking programs', () => {
  it('is what the Bash tool remembers by', () => {
    expect(bashRememberRule('zzfrob sub --flag')).toBe('Bash(zzfrob sub:*)');
    expect(bashRememberRule('git commit -m x')).toBe('Bash(git:*)');
  });

  it('is what a command tool remembers by', () => {
    expect(rememberRuleFor(shellTool, { command: 'zzfrob sub --flag' }, 'zzfrob sub --flag')).toBe(
      'Shell(zzfrob sub:*)',
    );
    expect(rememberRuleFor(shellTool, { command: 'git commit -m x' }, 'git commit -m x')).toBe('Shell(git:*)');
  });

  it('names the usual package managers and version-control tools', async () => {
    const { SUBCOMMAND_TOOLS } = await vi.importActual<typeof import('../../src/tools/shell/subcommand-tools.js')>(
      '../../src/tools/shell/subcommand-tools.js',
    );
    for (const name of ['npm', 'pnpm', 'yarn', 'git', 'gh', 'cargo', 'go', 'docker', 'kubectl', 'pip', 'uv', 'pipx'])
      expect(SUBCOMMAND_TOOLS.has(name), name).toBe(true);
  });
});
