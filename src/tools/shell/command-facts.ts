/**
 * What the permission layer knows about a `Bash` command, found without running anything (pure, dependency-free):
 * the command split into its simple commands, so rules judge every part, and the paths it reads. Everything FAILS
 * CLOSED: what is not fully understood is not a plain list and is never allowed by a prefix rule.
 *
 * Parts (2): the command is split at `;`, `&&`, `||`, `|`, `|&`, `&` and newlines into simple commands, each
 * normalised for rules: quotes and backslashes removed (`\rm`, `'rm'`, `r''m`, `$'rm'` → `rm`), words re-quoted only
 * where needed, single spaces; harmless leading assignments (`NODE_ENV=test`, see `HARMLESS_VARIABLES`) and wrappers
 * (`timeout 5`, `nice -n 5`, `nohup`, `time`, `command`, `builtin`, `exec`, `env [-i] [-u X]`, `stdbuf`) are looked
 * through, so a wrapper is matched as what it runs; any other assignment (`PATH=…`, `LD_PRELOAD=…`) stays in the part,
 * so no prefix rule matches it. Runners (`sudo`, `xargs`, shells, `eval`, `trap`, `su -c`, `find -exec`, `watch`…, and
 * a wrapper with an option it does not know) are allowed only by an exact rule, never by a prefix rule for the runner.
 * Deny and ask rules also see other spellings: the wrapped form, the base name of a command given by path
 * (`/bin/rm`), `git` without global options (`git -C . push` → `git push`), every command inside `$(…)`, backticks,
 * `<(…)`, unquoted here-documents, subshells, groups, compound commands and runners' scripts (`bash -c '…'`), and,
 * when the text cannot be tokenized, a crude split. A command that is not a plain list of simple commands
 * (substitutions, expansions, redirections to files, here-documents, subshells, groups, functions, keywords, comments,
 * assignments alone, empty commands) gets `parsed: false`: no prefix rule can allow it. A `cd` to a literal directory
 * is read-only and later parts joined by `&&` resolve paths from there; any other directory change makes later
 * relative paths unknown. Read paths are the operands of reading commands (`cat`, `head`, `grep` after its pattern,
 * `jq` after its filter, `find` before its expression…), `< file` targets and `cd` targets; `grep -r`/`rg` add
 * `dir/**`; following symlinks (`grep -R`, `rg -L`) and globs through directories cannot be located.
 */

import type { CommandFacts, CommandPartFacts } from '../../contracts/call-plan.js';
import { lex } from './lexer.js';
import type { Token, WordToken } from './lexer.js';
import { ASSIGNMENT, redirectReason, simpleCommandReason } from './read-only.js';
import {
  HARMLESS_VARIABLES,
  LEADING_KEYWORDS,
  NON_COMMAND_KEYWORDS,
  READERS,
  RUNNERS,
  SHELLS,
  WRAPPERS,
  PREFIX_UNSAFE_OPTIONS,
} from './command-tables.js';
import {
  GIT_VALUED_GLOBALS,
  MAX_NESTING,
  MAX_PARTS,
  MAX_READ_PATHS,
  MAX_SPELLINGS,
  MAX_SUFFIX_SPELLINGS,
  addOperand,
  addReads,
  addSpelling,
  addSuffixSpellings,
  addUnlocatableRead,
  canonicalWord,
  contentOf,
  gitWithoutGlobals,
  markNotPlain,
  markUnanalysed,
  normalizePath,
  resolveOperand,
  runnerCommandStart,
  shellScript,
  unwrap,
} from './command-reads.js';
import type { AnalysedPart, Collected, Scope, Separator, SimpleCommand } from './command-reads.js';

// What moved out of this file, re-exported so importers keep importing from here.
export { RUNNERS, SHELLS, WRAPPERS } from './command-tables.js';
export type { AnalysedPart } from './command-reads.js';

/** A `cd`'s destination: a path, or undefined when it cannot be known (`cd -`, an expansion). */
function cdDestination(args: readonly WordToken[], scope: Scope): { path: string | undefined } {
  const operands = args.filter((word) => !/^-[LPe@]+$/.test(word.value));
  if (operands.length > 1) return { path: undefined };
  const [target] = operands;
  if (target === undefined) return { path: scope.home };
  if (target.unsafe !== undefined || target.glob || target.value === '-' || target.value === '')
    return { path: undefined };
  const resolved = resolveOperand(target.value, { tilde: target.tilde, scope });
  return { path: resolved.startsWith('/') ? resolved : undefined };
}

/** Whether a shell runs its standard input: no script operand (or `-s`). */
function readsScriptFromInput(words: readonly WordToken[]): boolean {
  for (let k = 1; k < words.length; k += 1) {
    const value = words[k]?.value ?? '';
    if (value === '--' || value === '-') return k + 1 >= words.length;
    if (!/^[-+]/.test(value)) return false;
    if (!value.startsWith('--') && value.slice(1).includes('s')) return true;
    if (['-o', '+o', '-O', '+O', '--rcfile', '--init-file'].includes(value)) k += 1;
  }
  return true;
}

/** The script-file operand of a shell run without `-c` (`sh script.sh args`): the first word after its options. */
function scriptFileWord(words: readonly WordToken[]): WordToken | undefined {
  for (let k = 1; k < words.length; k += 1) {
    const value = words[k]?.value ?? '';
    if (value === '--' || value === '-') return words[k + 1];
    if (!/^[-+]/.test(value)) return words[k];
    if (['-o', '+o', '-O', '+O', '--rcfile', '--init-file'].includes(value)) k += 1;
  }
  return undefined;
}

/** The value of a short option (`-c x`, `-qc x`, `-cx`) or long option (`--command x`, `--command=x`). */
function clusterValue(words: readonly WordToken[], letter: string, long: string): string | undefined {
  for (let k = 1; k < words.length; k += 1) {
    const value = words[k]?.value ?? '';
    if (value === long) return words[k + 1]?.value;
    if (value.startsWith(`${long}=`)) return value.slice(long.length + 1);
    if (/^-[^-]/.test(value)) {
      const at = value.indexOf(letter, 1);
      if (at < 0) continue;
      return at === value.length - 1 ? words[k + 1]?.value : value.slice(at + 1);
    }
  }
  return undefined;
}

/** `git -c` keys that name no program and no alias. */
const GIT_SAFE_CONFIG =
  /^(user\.(name|email)|color\.[\w.-]+|advice\.[\w.-]+|init\.defaultbranch|safe\.directory|core\.(quotepath|autocrlf|safecrlf|filemode|ignorecase|abbrev|precomposeunicode)|commit\.gpgsign|tag\.gpgsign|log\.showsignature|pull\.(rebase|ff)|push\.default|merge\.ff|i18n\.[\w.-]+|column\.ui|protocol\.version|credential\.interactive)$/i;

/**
 * `git -c key=value` / `--config-env` before the subcommand: an alias `!cmd` is a shell script (collected); any key
 * that may name a program (`core.pager`, `core.sshCommand`, an alias to another subcommand…) cannot be checked.
 * Returns whether the part sets any configuration (then only an exact rule allows it).
 */
function gitConfigPrograms(words: readonly WordToken[], scope: Scope, out: Collected): boolean {
  let configured = false;
  for (let k = 1; k < words.length && (words[k]?.value ?? '').startsWith('-'); k += 1) {
    const option = words[k]?.value ?? '';
    if (GIT_VALUED_GLOBALS.has(option) && option !== '-c' && option !== '--config-env') {
      k += 1;
      continue;
    }
    if (option !== '-c' && option !== '--config-env' && !option.startsWith('--config-env=')) continue;
    configured = true;
    const setting = option.startsWith('--config-env=')
      ? option.slice('--config-env='.length)
      : (words[k + 1]?.value ?? '');
    if (!option.startsWith('--config-env=')) k += 1;
    const eq = setting.indexOf('=');
    const key = eq < 0 ? setting : setting.slice(0, eq);
    const value = eq < 0 ? '' : setting.slice(eq + 1);
    if (option === '-c' && /^alias\./i.test(key) && value.startsWith('!')) collectScript(value.slice(1), scope, out);
    else if (option !== '-c' || !GIT_SAFE_CONFIG.test(key))
      markUnanalysed(out, `\`git ${option} ${setting}\` may name a program to run`);
  }
  return configured;
}

/** What one simple command means for rules: its part, and how it changes the directory later parts run in. */
type AnalysedCommand = { part: AnalysedPart; cd?: { path: string | undefined }; losesDirectory?: boolean };

/** Where one simple command is analysed, and whether it is still a plain simple command. */
interface CommandContext {
  readonly scope: Scope;
  /** The scope of the commands it runs (substitutions, runners' commands): one level deeper, never top level. */
  readonly nested: Scope;
  readonly out: Collected;
  plainHere: boolean;
}

function notPlain(context: CommandContext, reason: string): void {
  context.plainHere = false;
  markNotPlain(context.out, reason);
}

/** What looking through leading assignments and wrappers found: the command that runs, and what it is. */
interface CommandHead {
  words: WordToken[];
  keptAssignments: WordToken[];
  spellings: string[];
  runner: boolean;
  wrappersReadOnly: boolean;
  query: boolean;
}

/** Collects the scripts inside a command's words and redirections, and the files its `<` redirections read. */
function scanWordsAndRedirects(command: SimpleCommand, context: CommandContext): void {
  const { scope, nested, out } = context;
  for (const word of command.words) {
    if (word.unsafe !== undefined) notPlain(context, word.unsafe);
    for (const script of word.substitutions) collectScript(script, nested, out);
  }
  for (const { token, target } of command.redirects) {
    for (const script of token.bodySubstitutions ?? []) collectScript(script, nested, out);
    if (target === undefined) {
      notPlain(context, 'redirection without a target');
      continue;
    }
    for (const script of target.substitutions) collectScript(script, nested, out);
    if (target.unsafe !== undefined) notPlain(context, target.unsafe);
    const reason = redirectReason(token, target);
    if (reason !== undefined) notPlain(context, reason);
    else if (token.op === '<' && target.unsafe !== undefined) addUnlocatableRead(out, target);
    else if (token.op === '<') addOperand(out, resolveOperand(target.value, { tilde: target.tilde, scope }));
  }
}

/** The words after leading shell keywords, or undefined when the command is a keyword construct of its own. */
function skipKeywords(command: SimpleCommand, context: CommandContext): WordToken[] | undefined {
  const { nested, out } = context;
  let words = command.words;
  while (words[0] !== undefined && words[0].raw === words[0].value && LEADING_KEYWORDS.has(words[0].value)) {
    notPlain(context, `shell keyword \`${words[0].value}\``);
    words = words.slice(1);
  }
  const first = words[0];
  if (first !== undefined && first.raw === first.value && NON_COMMAND_KEYWORDS.has(first.value)) {
    notPlain(context, `shell keyword \`${first.value}\``);
    if (first.value === 'coproc' || first.value === 'function') {
      // `coproc [NAME] command`, `function name [()] { body; }`: what follows runs (now or when called).
      nestedCommand(words.slice(1), nested, out);
      nestedCommand(words.slice(2), nested, out);
      if (words[2]?.value === '()') nestedCommand(words.slice(3), nested, out);
    }
    return undefined;
  }
  return words;
}

/** `env -S 'cmd args'` splits its value into a command: collected. */
function collectEnvSplitString(words: readonly WordToken[], context: CommandContext): void {
  const split = words.find((word) => /^(-S|--split-string)/.test(word.value));
  const index = split === undefined ? -1 : words.indexOf(split);
  const script =
    split === undefined
      ? undefined
      : split.value.length > 2 && split.value.startsWith('-S')
        ? split.value.slice(2)
        : split.value.includes('=')
          ? split.value.slice(split.value.indexOf('=') + 1)
          : words[index + 1]?.value;
  if (script !== undefined) collectScript(script, context.nested, context.out);
}

/** A shell (or `su`): the script it runs, from `-c`, its input or a script file, collected or marked unanalysed. */
function analyseShell(
  name: string,
  words: readonly WordToken[],
  command: SimpleCommand,
  context: CommandContext,
): void {
  const { nested, out } = context;
  const script = name === 'su' ? suScript(words) : shellScript(words);
  if (script !== undefined) collectScript(script, nested, out);
  else addSuffixSpellings(out, words);
  if (script === undefined && name !== 'su' && readsScriptFromInput(words)) {
    // No `-c` and no script file: the shell runs its input. A here-string or here-document is read here; a pipe cannot be.
    const input = command.redirects.find(({ token }) => token.op === '<<<' || token.op === '<<' || token.op === '<<-');
    if (input?.token.op === '<<<' && input.target !== undefined && input.target.unsafe === undefined)
      collectScript(input.target.value, nested, out);
    else if (input !== undefined && input.token.op !== '<<<' && input.token.body !== undefined)
      collectScript(input.token.body, nested, out);
    else if (
      input !== undefined ||
      command.before === '|' ||
      command.before === '|&' ||
      command.redirects.some(({ token }) => token.op === '<' || token.op === '<&')
    ) {
      markUnanalysed(out, `\`${name}\` runs commands from its input, which cannot be checked`);
    }
  }
  if (
    script === undefined &&
    name !== 'su' &&
    !readsScriptFromInput(words) &&
    scriptFileWord(words)?.unsafe !== undefined
  ) {
    // `sh $(…)`: the script file's name is an expansion, so not even which file runs can be known.
    markUnanalysed(out, `\`${name}\` runs a script whose name is an expansion, which cannot be checked`);
  }
}

/** `eval` and `trap`: the script they run, collected; an expansion in it is marked unanalysed. */
function analyseEvalOrTrap(name: string, words: readonly WordToken[], context: CommandContext): void {
  const operands =
    name === 'trap'
      ? words
          .slice(1)
          .filter(
            (word, index, all) => !(/^-/.test(word.value) && all.slice(0, index).every((w) => /^-/.test(w.value))),
          )
      : words.slice(1);
  const script = name === 'eval' ? operands.map((word) => word.value).join(' ') : operands[0]?.value;
  if (script !== undefined) collectScript(script, context.nested, context.out);
  if (operands.some((word) => word.unsafe !== undefined)) markUnanalysed(context.out, `\`${name}\` runs an expansion`);
}

/** `find -exec`, `-execdir`, `-ok`, `-okdir`: the commands they run, collected; whether there is one. */
function analyseFindExec(words: readonly WordToken[], context: CommandContext): boolean {
  let runner = false;
  for (let k = 1; k < words.length; k += 1) {
    if (!/^-(exec|execdir|ok|okdir)$/.test(words[k]?.value ?? '')) continue;
    runner = true;
    let end = k + 1;
    while (end < words.length && words[end]?.value !== ';' && words[end]?.value !== '+') end += 1;
    if (end > k + 1) nestedCommand(words.slice(k + 1, end), context.nested, context.out);
    k = end;
  }
  return runner;
}

/**
 * A command that is not a wrapper: whether it runs other commands (a runner, a shell, `eval`, `trap`, `script`,
 * `source`, `find -exec`), collecting what it runs on the way.
 */
function analyseRunner(words: WordToken[], command: SimpleCommand, context: CommandContext): boolean {
  const { scope, nested, out } = context;
  const name = words[0]?.value ?? '';
  const valued = RUNNERS.get(name);
  if (valued !== undefined) {
    addSuffixSpellings(out, words);
    const start = runnerCommandStart(valued, words);
    if (start < words.length) nestedCommand(words.slice(start), nested, out);
    if (name === 'xargs') {
      const file = words.findIndex((word) => word.value === '-a' || word.value === '--arg-file');
      if (file >= 0 && words[file + 1] !== undefined)
        addOperand(
          out,
          resolveOperand(words[file + 1]?.value ?? '', { tilde: words[file + 1]?.tilde ?? false, scope }),
        );
    }
    return true;
  }
  if (SHELLS.has(name) || name === 'su') {
    analyseShell(name, words, command, context);
    return true;
  }
  if (name === 'eval' || name === 'trap') {
    analyseEvalOrTrap(name, words, context);
    return true;
  }
  if (name === 'script') {
    // util-linux `script -c 'cmd'` runs cmd in a new terminal.
    const script = clusterValue(words, 'c', '--command');
    if (script !== undefined) collectScript(script, nested, out);
    return true;
  }
  if (name === 'source' || name === '.') return true;
  if (name === 'find') return analyseFindExec(words, context);
  return false;
}

/** Looks through harmless assignments and wrappers to the command that runs, noting the other spellings on the way. */
function lookThrough(start: WordToken[], command: SimpleCommand, context: CommandContext): CommandHead {
  const { out } = context;
  const head: CommandHead = {
    words: start,
    keptAssignments: [],
    spellings: [],
    runner: false,
    wrappersReadOnly: true,
    query: false,
  };
  let words = start;
  for (let guard = 0; guard < 8 && words.length > 0; guard += 1) {
    while (words[0] !== undefined && ASSIGNMENT.test(words[0].raw)) {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(words[0].raw)?.[0] ?? '';
      if (!HARMLESS_VARIABLES.has(name) || words[0].unsafe !== undefined || /^[^=]*[[+]/.test(words[0].raw))
        head.keptAssignments.push(words[0]);
      words = words.slice(1);
    }
    const first = words[0];
    if (first === undefined) break;
    const name = first.value;
    if (first.unsafe !== undefined || first.glob) {
      markUnanalysed(out, `the command name is an expansion or a pattern (\`${first.raw}\`)`);
      break;
    }
    if (head.keptAssignments.length > 0) head.spellings.push(contentOf([...head.keptAssignments, ...words]));
    if (name === 'command' && /^-[vV]$/.test(words[1]?.value ?? '')) {
      head.query = true;
      break;
    }
    const grammar = WRAPPERS.get(name);
    if (grammar === undefined) {
      head.runner = analyseRunner(words, command, context);
      break;
    }
    const rest = unwrap(grammar, words);
    if (rest === undefined) {
      head.runner = true;
      addSuffixSpellings(out, words);
      if (name === 'env') collectEnvSplitString(words, context);
      break;
    }
    if (rest.length === 0) break;
    head.spellings.push(contentOf(words));
    head.wrappersReadOnly &&= grammar.readOnly;
    words = rest;
  }
  head.words = words;
  return head;
}

/** The part's facts, once the command that runs is known: its spellings, reads, and whether it is read-only. */
function describePart(head: CommandHead, context: CommandContext): AnalysedCommand | undefined {
  const { scope, nested, out } = context;
  const { words, keptAssignments, spellings } = head;
  let runner = head.runner;
  const first = words[0];
  if (first === undefined) {
    if (keptAssignments.length > 0) notPlain(context, 'a variable assignment changes what later commands run');
    return undefined;
  }
  if (first.unsafe !== undefined || first.glob) notPlain(context, 'the command name is an expansion or a glob');
  const name = first.value;
  if (name.includes('/') && !name.endsWith('/'))
    spellings.push(
      contentOf([
        {
          ...first,
          value: name.slice(name.lastIndexOf('/') + 1),
          raw: name.slice(name.lastIndexOf('/') + 1),
          glob: false,
          tilde: false,
        },
        ...words.slice(1),
      ]),
    );
  if (name === 'git') {
    const plainGit = gitWithoutGlobals(words);
    if (plainGit !== undefined) spellings.push(contentOf(plainGit));
    const configured = gitConfigPrograms(words, nested, out);
    if (configured) runner = true;
  }
  if (PREFIX_UNSAFE_OPTIONS.get(name)?.(words) === true) runner = true;

  let readOnly: boolean;
  let cd: { path: string | undefined } | undefined;
  if (name === 'cd') {
    cd = cdDestination(words.slice(1), scope);
    if (cd.path !== undefined) addOperand(out, cd.path);
    readOnly = cd.path !== undefined;
  } else {
    readOnly = head.query || simpleCommandReason(words) === undefined;
    const reader = READERS.get(name);
    if (reader !== undefined) addReads(out, reader, name, words.slice(1), scope);
  }
  readOnly &&= context.plainHere && !runner && head.wrappersReadOnly && keptAssignments.length === 0;

  const content = contentOf([...keptAssignments, ...words]);
  if (keptAssignments.length > 0) spellings.push(contentOf(words));
  for (const spelling of spellings) if (spelling !== content) addSpelling(out, spelling);
  const facts: CommandPartFacts = runner ? { content, readOnly: false, runner: true } : { content, readOnly };
  const losesDirectory = name === 'pushd' || name === 'popd' || name === 'source' || name === '.' || name === 'eval';
  return {
    part: { facts, words: words.map(canonicalWord), assignments: keptAssignments.length > 0 },
    ...(cd === undefined ? {} : { cd }),
    ...(losesDirectory ? { losesDirectory } : {}),
  };
}

/** What one simple command means for rules; nested commands it runs are collected on the way. */
function analyseCommand(command: SimpleCommand, scope: Scope, out: Collected): AnalysedCommand | undefined {
  const context: CommandContext = {
    scope,
    nested: { ...scope, depth: scope.depth + 1, top: false },
    out,
    plainHere: true,
  };
  scanWordsAndRedirects(command, context);
  const words = skipKeywords(command, context);
  if (words === undefined) return undefined;
  return describePart(lookThrough(words, command, context), context);
}

/** The script `su -c` runs, if any. */
function suScript(words: readonly WordToken[]): string | undefined {
  for (let k = 1; k < words.length; k += 1) {
    const value = words[k]?.value ?? '';
    if (value === '-c' || value === '--command') return words[k + 1]?.value;
    if (value.startsWith('--command=')) return value.slice('--command='.length);
    if (/^-c./.test(value)) return value.slice(2);
  }
  return undefined;
}

/** Analyses the words of a command that another command runs (`sudo X`, `xargs X`, `find -exec X`): deny and ask rules see it. */
function nestedCommand(words: WordToken[], scope: Scope, out: Collected): void {
  if (scope.depth > MAX_NESTING) return;
  const analysed = analyseCommand({ words, redirects: [], before: undefined, after: undefined }, scope, out);
  if (analysed !== undefined) addSpelling(out, analysed.part.facts.content);
}

/** Groups tokens into simple commands and the separators between them; marks what is not a plain list. */
function groupCommands(tokens: readonly Token[], scope: Scope, out: Collected): SimpleCommand[] {
  const commands: SimpleCommand[] = [];
  let current: SimpleCommand = { words: [], redirects: [], before: undefined, after: undefined };
  const nested: Scope = { ...scope, depth: scope.depth + 1, top: false };
  for (let k = 0; k < tokens.length; k += 1) {
    const token = tokens[k];
    if (token === undefined) break;
    if (token.kind === 'word') {
      current.words.push(token);
      continue;
    }
    if (token.kind === 'redirect') {
      const target = tokens[k + 1];
      if (target?.kind === 'word') k += 1;
      current.redirects.push({ token, target: target?.kind === 'word' ? target : undefined });
      continue;
    }
    switch (token.op) {
      case 'comment':
        markNotPlain(out, 'a `#` comment');
        continue;
      case 'process-substitution':
        markNotPlain(out, 'process substitution `<(...)`/`>(...)`');
        if (token.script !== undefined) collectScript(token.script, nested, out);
        continue;
      case '(':
      case ')':
        markNotPlain(out, 'subshell or grouping `( )`');
        break;
      case '|':
      case '||':
      case '&&':
      case '|&':
      case ';':
      case '&':
      case 'newline':
        break;
    }
    const separator: Separator = token.op;
    if (current.words.length === 0 && current.redirects.length === 0) {
      const afterGroup = current.before === '(' || current.before === ')';
      if (separator !== 'newline' && separator !== '(' && separator !== ')' && !afterGroup)
        markNotPlain(out, `empty command before \`${separator}\``);
      current = { words: [], redirects: [], before: separator, after: undefined };
      continue;
    }
    commands.push({ ...current, after: separator });
    current = { words: [], redirects: [], before: separator, after: undefined };
  }
  if (current.words.length > 0 || current.redirects.length > 0) commands.push(current);
  else if (current.before === '&&' || current.before === '||' || current.before === '|' || current.before === '|&')
    markNotPlain(out, `the command ends with \`${current.before}\``);
  return commands;
}

/** Best-effort command spellings of text that cannot be tokenized (deny rules still see them; the call asks). */
function crudeSpellings(script: string, out: Collected): void {
  for (const segment of script.split(/[;&|\n\r()`]|\$\(/)) {
    const words = segment
      .trim()
      .split(/\s+/)
      .map((word) => word.replace(/["'\\]/g, ''))
      .filter((word) => word !== '');
    if (words.length === 0) continue;
    addSpelling(out, words.join(' '));
    let added = 0;
    for (let k = 1; k < words.length && added < MAX_SUFFIX_SPELLINGS; k += 1) {
      if ((words[k] ?? '-').startsWith('-')) continue;
      addSpelling(out, words.slice(k).join(' '));
      added += 1;
    }
  }
}

function controlCharacterReason(script: string): string | undefined {
  for (let i = 0; i < script.length; i += 1) {
    const code = script.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09 && code !== 0x0a) || code === 0x7f) return 'a control character';
  }
  return undefined;
}

/** Splits a script into simple commands: parts (top level) or spellings (nested), read paths, and doubts. */
function collectScript(script: string, scope: Scope, out: Collected): void {
  if (scope.depth > MAX_NESTING) {
    markNotPlain(out, 'commands nested too deeply to check');
    crudeSpellings(script, out);
    return;
  }
  const control = controlCharacterReason(script);
  if (control !== undefined) markNotPlain(out, control);
  const lexed = lex(script);
  if (!lexed.ok) {
    markNotPlain(out, lexed.reason);
    crudeSpellings(script, out);
    return;
  }
  let dir = scope.dir;
  /** A `cd` whose destination holds only while the commands after it are joined by `&&` (or piped). */
  let inCdChain = false;
  for (const command of groupCommands(lexed.tokens, scope, out)) {
    if (inCdChain && command.before !== '&&' && command.before !== '|' && command.before !== '|&') {
      dir = undefined;
      inCdChain = false;
    }
    const analysed = analyseCommand(command, { ...scope, dir }, out);
    if (analysed === undefined) continue;
    if (scope.top) {
      if (out.parts.length < MAX_PARTS) out.parts.push(analysed.part);
      else out.truncated = true;
    } else {
      addSpelling(out, analysed.part.facts.content);
    }
    if (analysed.cd !== undefined) {
      const follows =
        command.before !== '||' &&
        command.before !== '|' &&
        command.before !== '|&' &&
        (command.after === undefined || command.after === '&&');
      dir = follows ? analysed.cd.path : undefined;
      inCdChain = follows && dir !== undefined;
    } else if (analysed.losesDirectory === true) {
      dir = undefined;
    }
  }
}

export function analyse(options: { command: string; cwd: string; homeDir: string }): Collected {
  const out: Collected = {
    parts: [],
    spellings: new Set(),
    readPaths: new Set(),
    notPlain: undefined,
    unanalysed: undefined,
    truncated: false,
  };
  collectScript(
    options.command,
    { dir: normalizePath(options.cwd), home: normalizePath(options.homeDir), depth: 0, top: true },
    out,
  );
  if (out.parts.length === 0) markNotPlain(out, 'no command to run');
  return out;
}

/**
 * What the permission chain needs to know about a shell command, found without running anything: its simple
 * commands (normalised, each with whether it is read-only), other spellings deny and ask rules must see, whether it
 * is a plain list at all, and the paths its commands read (resolved against `cwd`, `~` against `homeDir`). A command
 * too large to check in full is denied: deny rules must hold for every part of it.
 */
export function bashPermissionFacts(options: { command: string; cwd: string; homeDir: string }): {
  commands: CommandFacts;
  readPaths: string[];
  deny?: { reason: string };
} {
  const out = analyse(options);
  const parts = out.parts.map((part) => part.facts);
  const contents = new Set(parts.map((part) => part.content));
  const otherSpellings = [...out.spellings].filter((spelling) => !contents.has(spelling));
  const unanalysed = out.unanalysed === undefined ? {} : { unanalysed: out.unanalysed };
  const commands: CommandFacts =
    out.notPlain === undefined
      ? { parsed: true, parts, otherSpellings }
      : { parsed: false, reason: out.notPlain, parts, otherSpellings, ...unanalysed };
  const facts = { commands, readPaths: [...out.readPaths] };
  if (!out.truncated) return facts;
  return {
    ...facts,
    deny: {
      reason: `The command is too large to check against permission rules (more than ${MAX_PARTS} commands, ${MAX_SPELLINGS} spellings or ${MAX_READ_PATHS} paths); split it into smaller commands.`,
    },
  };
}
