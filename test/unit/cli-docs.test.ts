// docs/CLI.md is the reference of the `switchyard` command: every command and every option its help prints must be
// documented there. The help texts are the source (src/cli/help.ts, and the console's own usage).
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { CONSOLE_USAGE } from '../../src/cli/console-command.js';
import { COMMAND_HELP, OVERVIEW } from '../../src/cli/help.js';

/** Every command's help text, by command name, as `switchyard <command> --help` prints it. */
const helpByCommand: Record<string, string> = { ...COMMAND_HELP, console: CONSOLE_USAGE };

/** The command names the overview lists: the first word of each indented line of its command sections. */
function overviewCommands(): string[] {
  const sections = OVERVIEW.slice(0, OVERVIEW.indexOf('\nEvery command takes'));
  return [...sections.matchAll(/^ {2}([a-z][a-z-]*)\b/gm)].map(([, name = '']) => name);
}

/** The long options a help text names (`--session`, `--tls-cert-path`, …), and its short ones (`-f`). */
function optionsIn(text: string): string[] {
  const long = [...text.matchAll(/(?<![\w-])--[a-z][a-z0-9-]*/g)].map(([option]) => option);
  const short = [...text.matchAll(/(?<![\w-])-[a-zA-Z](?![\w-])/g)].map(([option]) => option);
  return [...new Set([...long, ...short])];
}

/** The text of docs/CLI.md under `### \`switchyard <command>…\``, up to the next heading of that level or higher. */
function sectionOf(doc: string, command: string): string | undefined {
  const headings = [...doc.matchAll(/^(#{2,3}) (.*)$/gm)];
  const index = headings.findIndex(
    ([, level, title = '']) => level === '###' && title.startsWith(`\`switchyard ${command}`),
  );
  if (index === -1) return undefined;
  const start = headings[index]?.index ?? 0;
  const next = headings.slice(index + 1).find(([, level = '']) => level.length <= 3);
  return doc.slice(start, next?.index ?? doc.length);
}

/** What docs/CLI.md says every command takes (the connection flags, --help, --json). */
function commonSection(doc: string): string {
  const start = doc.indexOf('\n## Options every command takes\n');
  return start === -1 ? '' : doc.slice(start, doc.indexOf('\n## ', start + 1));
}

describe('docs/CLI.md documents the CLI as its help prints it', () => {
  it('has a section for every command the overview lists, and for every command with help of its own', async () => {
    const doc = await readFile('docs/CLI.md', 'utf8');
    const commands = new Set([...overviewCommands(), ...Object.keys(helpByCommand)]);
    expect(commands.size).toBeGreaterThan(15);
    const missing = [...commands].filter((command) => sectionOf(doc, command) === undefined);
    expect(missing, 'commands without a "### `switchyard <command>`" section in docs/CLI.md').toEqual([]);
  });

  it("names every option of a command's help in that command's section, or among the options every command takes", async () => {
    const doc = await readFile('docs/CLI.md', 'utf8');
    const common = commonSection(doc);
    const missing: string[] = [];
    for (const [command, help] of Object.entries(helpByCommand)) {
      const section = sectionOf(doc, command) ?? '';
      for (const option of optionsIn(help))
        if (!section.includes(`\`${option}`) && !common.includes(`\`${option}`)) missing.push(`${command} ${option}`);
    }
    expect(missing, 'options the help prints that docs/CLI.md does not document').toEqual([]);
  });

  it('documents the connection flags the overview names among the options every command takes', async () => {
    const common = commonSection(await readFile('docs/CLI.md', 'utf8'));
    const connection = OVERVIEW.slice(OVERVIEW.indexOf('\nConnection'), OVERVIEW.indexOf('\nEnvironment'));
    expect(optionsIn(connection)).toContain('--tls-cert-path');
    const missing = optionsIn(connection).filter((option) => !common.includes(`\`${option}`));
    expect(missing).toEqual([]);
  });
});
