/** What the permission layer knows about a `Bash` command, stage by stage: lexer, read-only classifier, command facts, remembered rule (and the programs that take a subcommand). */
export { classifyCommand, isReadOnlyCommand } from './read-only.js';
export type { CommandClassification } from './read-only.js';
export { bashPermissionFacts } from './command-facts.js';
export { bashRememberRule } from './remember-rule.js';
export { SUBCOMMAND_TOOLS } from './subcommand-tools.js';
