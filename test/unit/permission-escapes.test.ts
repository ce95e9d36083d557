/**
 * Reads and runs around the permission layer that a review found, each as an attack row: the call is planned with
 * the real tools (their `ruleContent`, `rememberRule` and `permissionFacts`, with the file system of the fixture
 * below), then `decidePermission` decides exactly as the session workflow does. Rows are grouped by what they attack.
 */
import { access, mkdir, rename, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseRule } from '../../src/contracts/permission-rules.js';
import type { PermissionMode } from '../../src/contracts/session.js';
import { bashTool } from '../../src/tools/builtin/bash.js';
import { editTool } from '../../src/tools/builtin/edit.js';
import { globTool } from '../../src/tools/builtin/glob.js';
import { grepTool } from '../../src/tools/builtin/grep.js';
import { readTool } from '../../src/tools/builtin/read.js';
import { writeTool } from '../../src/tools/builtin/write.js';
import { decidePermission } from '../../src/contracts/decide-permission.js';
import { scratchDir } from '../support/scratch.js';
import { toolContext } from '../support/tool-context.js';
import { planner, ready } from '../support/tool-plans.js';

type Behavior = 'allow' | 'ask' | 'deny';

interface Row {
  command?: string;
  tool?: string;
  input?: Record<string, unknown>;
  mode?: PermissionMode;
  allow?: string[];
  ask?: string[];
  deny?: string[];
  remembered?: string[];
  expected: Behavior;
}

const plan = planner([bashTool, readTool, grepTool, globTool, writeTool, editTool]);
let cwd = '';
/** A directory outside the workspace: `O/secret.txt`, `O/creds.json`, `O/sub/`. */
let outside = '';

/** `$O` in a row's command or input stands for the outside directory. */
const expand = (text: string): string => text.replaceAll('$O', outside);

async function decide(row: Row): Promise<{ behavior: Behavior; reason: string; rememberRule: string }> {
  const input =
    row.input === undefined
      ? { command: expand(row.command ?? '') }
      : (JSON.parse(expand(JSON.stringify(row.input))) as Record<string, unknown>);
  const rules = (list: string[] | undefined) => (list ?? []).map((rule) => parseRule(expand(rule)));
  const planned = ready(await plan(cwd, row.tool ?? 'Bash', input, (row.allow ?? []).map(expand)));
  const decision = decidePermission({
    subject: {
      toolName: planned.toolName,
      contentKind: planned.ruleKind,
      cwd,
      ...(planned.ruleContent === undefined ? {} : { content: planned.ruleContent }),
    },
    mode: row.mode ?? 'default',
    rules: { allow: rules(row.allow), ask: rules(row.ask), deny: rules(row.deny) },
    remembered: rules(row.remembered),
    readOnly: planned.flags.declaredReadOnly,
    editsInsideCwd: planned.editsInsideCwd,
    alwaysAsk: planned.alwaysAsk,
    ...(planned.permission === undefined ? {} : { facts: planned.permission }),
  });
  return { behavior: decision.behavior, reason: decision.reason, rememberRule: planned.rememberRule };
}

const denyRm = ['Bash(rm:*)'];
const denyEnv = ['Read(.env)'];

/** Finding → rows. */
const findings: Record<string, Row[]> = {
  '1: `..` after a symlinked directory': [
    { command: 'cat d/../secret.txt', mode: 'plan', expected: 'ask' },
    { command: 'cat d/../secret.txt', expected: 'ask' },
    { command: 'cat d/../secret.txt', mode: 'bypassPermissions', deny: ['Read($O/secret.txt)'], expected: 'deny' },
    { command: 'cd d && cat ../secret.txt', mode: 'plan', expected: 'ask' },
    { command: 'head -n 3 ./d/../secret.txt', expected: 'ask' },
    { command: 'wc -c < d/../secret.txt', expected: 'ask' },
    // Still allowed: `..` through real directories inside cwd.
    { command: 'cat src/../README.md', expected: 'allow' },
    { command: 'cat ./src/../.env', deny: denyEnv, expected: 'deny' },
  ],
  '2: values glued to short options': [
    { command: 'file -m$O/secret.txt /dev/null', mode: 'plan', expected: 'ask' },
    { command: 'file -m/etc/hostname:$O/secret.txt /dev/null', expected: 'ask' },
    { command: 'file -f$O/secret.txt', expected: 'ask' },
    { command: 'grep -f$O/secret.txt README.md', expected: 'ask' },
    { command: 'grep -hf$O/secret.txt README.md', expected: 'ask' },
    { command: 'rg -f$O/secret.txt README.md', expected: 'ask' },
    { command: 'grep -f.env README.md', deny: denyEnv, expected: 'deny' },
    { command: 'file -m.env README.md', deny: denyEnv, mode: 'bypassPermissions', expected: 'deny' },
    { command: 'grep -n KEY README.md', expected: 'allow' },
  ],
  '3: jq modules and file arguments': [
    { command: `jq -n 'import "../outside/creds" as $c; $c'`, expected: 'ask' },
    { command: `jq -n 'import "../outside/creds" as $c; $c'`, mode: 'plan', expected: 'deny' },
    { command: `jq -n 'include "x"; .'`, expected: 'ask' },
    { command: 'jq -L/ -n .', expected: 'ask' },
    { command: 'jq -L $O -n .', expected: 'ask' },
    { command: 'jq --library-path=/ -n .', expected: 'ask' },
    { command: "jq -n --rawfile a README.md '$a'", expected: 'ask' },
    { command: "jq -n --slurpfile a README.md '$a'", expected: 'ask' },
    { command: 'jq . README.md', expected: 'allow' },
  ],
  '4: a glob that may expand into an option, for every command': [
    { command: 'grep -h TOP *', mode: 'plan', expected: 'deny' },
    { command: 'cat *', expected: 'ask' },
    { command: 'ls *', expected: 'ask' },
    { command: 'head *.md', expected: 'ask' },
    { command: 'wc -l *', expected: 'ask' },
    { command: 'jq . *.json', expected: 'ask' },
    // After `--` a glob can only be an operand.
    { command: 'cat -- *.md', expected: 'allow' },
    { command: 'grep -h TOP -- *.md', expected: 'allow' },
    { command: 'cat src/*.ts', expected: 'allow' },
  ],
  '6: shell forms the splitter cannot see through fail closed under deny rules, even in bypassPermissions': [
    ...[
      'coproc rm -f v',
      "sh <<< 'rm -f v'",
      "bash <<< 'rm -f v'",
      "trap -- 'rm -f v' EXIT",
      "trap 'rm -f v' EXIT",
      'function f { rm -f v; }; f',
      'f() { rm -f v; }; f',
      'sh <<EOF\nrm -f v\nEOF',
      "echo 'rm -f v' | sh",
      "printf 'rm -f v' | bash -s",
      'rm${IFS}-f v',
      '{rm,-f,v}',
      'a=rm; $a -f v',
      "script -qc 'rm -f v' /dev/null",
      'unbuffer rm -f v',
      "git -c alias.z='!rm -f v' z",
      'cat ${IFS}.env',
      'X=.env; cat $X',
    ].map((command): Row => ({ command, mode: 'bypassPermissions', deny: [...denyRm, ...denyEnv], expected: 'deny' })),
    // Without deny rules bypassPermissions still runs them; plain commands still run under deny rules.
    { command: 'coproc rm -f v', mode: 'bypassPermissions', expected: 'allow' },
    { command: 'echo $HOME', mode: 'bypassPermissions', deny: denyRm, expected: 'allow' },
    { command: 'touch v && ls', mode: 'bypassPermissions', deny: denyRm, expected: 'allow' },
    { command: 'git -c user.name=x commit -m m', mode: 'bypassPermissions', deny: denyRm, expected: 'allow' },
  ],
  '8: options that make a prefix-allowed program run other code': [
    {
      command: "npm test --node-options='--import=data:text/javascript,1'",
      allow: ['Bash(npm test:*)'],
      expected: 'ask',
    },
    { command: 'npm test --script-shell=/tmp/x.sh', allow: ['Bash(npm test:*)'], expected: 'ask' },
    { command: 'npm test --userconfig=/tmp/npmrc', allow: ['Bash(npm test:*)'], expected: 'ask' },
    { command: 'npm test --prefix /tmp/evil', allow: ['Bash(npm test:*)'], expected: 'ask' },
    { command: 'npm test --node-opt=x', allow: ['Bash(npm test:*)'], expected: 'ask' },
    { command: 'npm run build --script-shell x', allow: ['Bash(npm run build:*)'], expected: 'ask' },
    { command: "make build --eval='build:; touch pwned'", allow: ['Bash(make build:*)'], expected: 'ask' },
    { command: 'git push --receive-pack=/tmp/x origin', allow: ['Bash(git push:*)'], expected: 'ask' },
    { command: 'npm test -- --watch', allow: ['Bash(npm test:*)'], expected: 'allow' },
    { command: 'npm test --silent', allow: ['Bash(npm test:*)'], expected: 'allow' },
  ],
  '9: endless device files are not dataless': [
    { command: 'cat /dev/zero', expected: 'ask' },
    { command: 'sort /dev/zero', mode: 'plan', expected: 'ask' },
    { command: 'head -c 10 /dev/urandom', expected: 'ask' },
    { command: 'cat README.md < /dev/null', expected: 'allow' },
  ],
  // Decided in the text (SECURITY.md): bypassPermissions asks nothing, so ask rules and strong asks allow there; deny rules hold.
  '10: bypassPermissions asks nothing and denies what deny rules name': [
    { command: 'touch x', ask: ['Bash(touch:*)'], mode: 'bypassPermissions', expected: 'allow' },
    { tool: 'Write', input: { file_path: '.git/config', content: 'x' }, mode: 'bypassPermissions', expected: 'allow' },
    {
      tool: 'Write',
      input: { file_path: '.git/config', content: 'x' },
      mode: 'acceptEdits',
      allow: ['Edit(.git/**)'],
      expected: 'ask',
    },
    { command: 'touch x', deny: ['Bash(touch:*)'], mode: 'bypassPermissions', expected: 'deny' },
  ],
  '11: find output primaries, path-rule prefixes, directory deny rules': [
    { command: 'find . -fprintf out.txt %p', expected: 'ask' },
    { command: 'find . -fprint0 out.txt', expected: 'ask' },
    { command: 'find . -okdir rm {} ;', expected: 'ask' },
    { command: 'find . --fprintf out.txt %p', expected: 'ask' },
    { tool: 'Glob', input: { pattern: '**/*' }, deny: ['Read(secret)'], expected: 'allow' },
    { tool: 'Read', input: { file_path: 'secret/k.txt' }, deny: ['Read(secret)'], expected: 'deny' },
    { tool: 'Read', input: { file_path: 'src2/b.ts' }, deny: ['Read(src)'], expected: 'allow' },
    { command: 'cat src2/b.ts', deny: ['Read(src)'], expected: 'allow' },
    { command: 'cat secret/k.txt', deny: ['Read(secret)'], expected: 'deny' },
  ],
  '12: file tools match rules on the file they reach': [
    { tool: 'Read', input: { file_path: 'docs/notes.txt' }, deny: denyEnv, mode: 'plan', expected: 'deny' },
    { tool: 'Read', input: { file_path: 'docs/notes.txt' }, deny: denyEnv, expected: 'deny' },
    { tool: 'Read', input: { file_path: 'docs/notes.txt' }, ask: denyEnv, expected: 'ask' },
    {
      tool: 'Write',
      input: { file_path: 'src/config.txt', content: 'x' },
      allow: ['Edit(src/**)'],
      deny: ['Edit(.env)'],
      expected: 'deny',
    },
    { tool: 'Write', input: { file_path: 'src/config.txt', content: 'x' }, allow: ['Edit(src/**)'], expected: 'ask' },
    {
      tool: 'Write',
      input: { file_path: 'src/config.txt', content: 'x' },
      allow: ['Edit(src/**)'],
      mode: 'acceptEdits',
      deny: ['Edit(.env)'],
      expected: 'deny',
    },
    {
      tool: 'Edit',
      input: { file_path: 'src/config.txt', old_string: 'KEY', new_string: 'K' },
      allow: ['Edit(src/**)'],
      expected: 'ask',
    },
    { tool: 'Write', input: { file_path: 'src/new.ts', content: 'x' }, allow: ['Edit(src/**)'], expected: 'allow' },
    { tool: 'Grep', input: { pattern: 'KEY', path: 'docs/notes.txt' }, deny: denyEnv, expected: 'deny' },
  ],
};

beforeAll(async () => {
  cwd = await scratchDir('switchyard-escapes-');
  outside = await scratchDir('switchyard-escapes-outside-');
  await mkdir(path.join(outside, 'sub'));
  await writeFile(path.join(outside, 'secret.txt'), 'outside secret\n');
  await writeFile(path.join(outside, 'creds.json'), '{"token":"t"}\n');
  for (const dir of ['src', 'src2', 'docs', 'secret']) await mkdir(path.join(cwd, dir));
  await writeFile(path.join(cwd, 'README.md'), '# readme\n');
  await writeFile(path.join(cwd, '.env'), 'KEY=secret\n');
  await writeFile(path.join(cwd, 'src', 'a.ts'), 'export {};\n');
  await writeFile(path.join(cwd, 'src2', 'b.ts'), 'export {};\n');
  await writeFile(path.join(cwd, 'secret', 'k.txt'), 'k\n');
  await symlink(path.join(outside, 'sub'), path.join(cwd, 'd'));
  await symlink('../.env', path.join(cwd, 'docs', 'notes.txt'));
  await symlink('../.env', path.join(cwd, 'src', 'config.txt'));
});

for (const [finding, rows] of Object.entries(findings)) {
  describe(`finding ${finding}`, () => {
    it.each(rows.map((row) => [describeRow(row), row] as const))('%s', async (_name, row) => {
      const { behavior, reason } = await decide(row);
      expect(behavior, reason).toBe(row.expected);
    });
  });
}

/** Finding 7: programs that run what their arguments say are remembered exactly, never as a prefix. */
const remembers: Array<[string, string]> = [
  ['tar -cf a.tar README.md', 'Bash(tar -cf a.tar README.md)'],
  ['zip -r a.zip src', 'Bash(zip -r a.zip src)'],
  ['sqlite3 db.sqlite .tables', 'Bash(sqlite3 db.sqlite .tables)'],
  ['vim README.md', 'Bash(vim README.md)'],
  ['gdb ./a.out', 'Bash(gdb ./a.out)'],
  ['less README.md', 'Bash(less README.md)'],
  ['docker compose up', 'Bash(docker compose up)'],
  ['pip install requests', 'Bash(pip install requests)'],
  ['npm install left-pad', 'Bash(npm install left-pad)'],
  ['npm i left-pad', 'Bash(npm i left-pad)'],
  ['patch -p1 -i fix.diff', 'Bash(patch -p1 -i fix.diff)'],
  ['openssl version', 'Bash(openssl version)'],
  ['npm test', 'Bash(npm test:*)'],
  ['touch a', 'Bash(touch:*)'],
];

describe('finding 7: allow_always never remembers a prefix of a program that runs what its arguments say', () => {
  it.each(remembers)('%j → %s', async (command, expected) => {
    expect((await decide({ command, expected: 'ask' })).rememberRule).toBe(expected);
  });
  it('the remembered tar rule does not allow tar --checkpoint-action', async () => {
    const { rememberRule } = await decide({ command: 'tar -cf a.tar README.md', expected: 'ask' });
    const next = await decide({
      command: "tar -cf b.tar README.md --checkpoint=1 --checkpoint-action=exec='touch pwned'",
      remembered: [rememberRule],
      expected: 'ask',
    });
    expect(next.behavior).toBe('ask');
  });
});

describe('finding 13: remembered path rules name the file, not a pattern', () => {
  it.each(['**', '*', '?', '[x]', '{a,b}', 'a*b'])(
    'a Write to a file named %j remembers a rule that allows only that file',
    async (name) => {
      const { rememberRule } = await decide({
        tool: 'Write',
        input: { file_path: name, content: 'x' },
        expected: 'ask',
      });
      const same = await decide({
        tool: 'Write',
        input: { file_path: name, content: 'y' },
        remembered: [rememberRule],
        expected: 'allow',
      });
      expect(same.behavior, rememberRule).toBe('allow');
      const other = await decide({
        tool: 'Write',
        input: { file_path: 'README.md', content: 'y' },
        remembered: [rememberRule],
        expected: 'ask',
      });
      expect(other.behavior, rememberRule).toBe('ask');
    },
  );
});

describe('finding 12: the approver sees the file that will really be written', () => {
  it.each([
    ['Write', { file_path: 'src/config.txt', content: 'x' }],
    ['Edit', { file_path: 'src/config.txt', old_string: 'KEY', new_string: 'K' }],
  ] as const)('%s through a symlink names the real file in its preview', async (tool, input) => {
    const planned = ready(await plan(cwd, tool, input));
    expect(planned.approval?.preview).toContain(
      `${path.join(cwd, '.env')} (${path.join(cwd, 'src', 'config.txt')} is a symlink to it)`,
    );
  });
});

describe('finding 12: the rules are checked again on the real path when the file is opened', () => {
  it.each(['Write', 'Read'] as const)(
    '%s: a folder swapped for a link to a denied folder after the decision is refused',
    async (toolName) => {
      const root = await scratchDir('switchyard-swap-');
      await mkdir(path.join(root, 'notes'));
      await mkdir(path.join(root, 'secret'));
      await writeFile(path.join(root, 'notes', 'a.txt'), 'notes\n');
      await writeFile(path.join(root, 'secret', 'a.txt'), 'secret\n');
      const tool = toolName === 'Write' ? writeTool : readTool;
      const input =
        toolName === 'Write' ? { file_path: 'notes/a.txt', content: 'overwritten\n' } : { file_path: 'notes/a.txt' };
      const planned = ready(await plan(root, toolName, input));
      // After approval: the folder is swapped for a link to the denied one.
      await rename(path.join(root, 'notes'), path.join(root, 'notes-old'));
      await symlink(path.join(root, 'secret'), path.join(root, 'notes'));
      const denyRules = [toolName === 'Write' ? 'Edit(secret/**)' : 'Read(secret/**)'];
      await expect(
        (tool.execute as (input: unknown, context: unknown) => Promise<unknown>)(
          planned.input,
          toolContext({ cwd: root, denyRules }),
        ),
      ).rejects.toThrow(/secret/);
      expect(await access(path.join(root, 'secret', 'a.txt')).then(() => true)).toBe(true);
      const { readFile } = await import('node:fs/promises');
      expect(await readFile(path.join(root, 'secret', 'a.txt'), 'utf8')).toBe('secret\n');
    },
  );
});

function describeRow(row: Row): string {
  const text =
    row.command === undefined ? `${row.tool ?? ''} ${JSON.stringify(row.input)}` : JSON.stringify(row.command);
  const rules = [
    ...(row.allow ?? []).map((rule) => `allow ${rule}`),
    ...(row.ask ?? []).map((rule) => `ask ${rule}`),
    ...(row.deny ?? []).map((rule) => `deny ${rule}`),
  ];
  return `${text}${rules.length === 0 ? '' : ` [${rules.join(', ')}]`}${row.mode === undefined ? '' : ` in ${row.mode}`} → ${row.expected}`;
}
