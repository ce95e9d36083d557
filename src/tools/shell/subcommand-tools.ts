/**
 * Programs whose second word is a subcommand (`npm test`, `git status`): a remembered prefix names the pair, not all
 * of `npm`. Used by the `Bash` tool's remembered rule (remember-rule.ts) and by the default remembered rule of any
 * tool whose rules match a command (`rememberRuleFor` in src/activities/prepare-call.ts).
 */
export const SUBCOMMAND_TOOLS: ReadonlySet<string> = new Set([
  'npm',
  'npx',
  'pnpm',
  'yarn',
  'bun',
  'deno',
  'git',
  'gh',
  'cargo',
  'go',
  'docker',
  'kubectl',
  'make',
  'pip',
  'pip3',
  'poetry',
  'uv',
  'pipx',
]);
