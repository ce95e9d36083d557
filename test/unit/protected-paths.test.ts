import { mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRule } from '../../src/contracts/permission-rules.js';
import type { PermissionMode } from '../../src/contracts/session.js';
import fc from 'fast-check';
import { mayNameProtectedPath, protectedPathMatch } from '../../src/tools/support/protected-paths.js';
import { editTool } from '../../src/tools/builtin/edit.js';
import { writeTool } from '../../src/tools/builtin/write.js';
import { decidePermission } from '../../src/contracts/decide-permission.js';
import { scratchDir } from '../support/scratch.js';
import { planner, ready } from '../support/tool-plans.js';

const prepare = planner([writeTool, editTool]);

describe('protectedPathMatch (pure: one lexical absolute path)', () => {
  const cwd = '/work/repo';
  const home = '/home/dev';
  // [path, protected?]
  const rows: Array<[string, boolean]> = [
    ['/work/repo/.git/config', true],
    ['/work/repo/.git/hooks/pre-commit', true],
    ['/work/repo/.git', true],
    ['/work/repo/vendor/lib/.git/config', true],
    ['/work/repo/.GIT/CONFIG', true],
    ['/work/repo/.git./config', true],
    ['/work/repo/.switchyard/settings.json', true],
    ['/work/repo/.claude/settings.json', true],
    ['/work/repo/.claude/settings.local.json', true],
    ['/work/repo/.claude/commands/x.md', true],
    ['/work/repo/.mcp.json', true],
    ['/work/repo/packages/a/.mcp.json', true],
    ['/work/repo/.vscode/tasks.json', true],
    ['/work/repo/.bashrc', true],
    ['/work/repo/sub/.envrc', true],
    ['/work/repo/.npmrc', true],
    ['/work/repo/.yarnrc.yml', true],
    ['/work/repo/.pnpmfile.cjs', true],
    ['/work/repo/bunfig.toml', true],
    ['/work/repo/.cargo/config.toml', true],
    ['/work/repo/crates/a/.cargo/config', true],
    ['/work/repo/.bazelrc', true],
    ['/work/repo/.hg/hgrc', true],
    ['/work/repo/tests/conftest.py', true],
    ['/work/repo/pip.conf', true],
    ['/work/repo/sub/bare/config', true],
    ['/work/repo/sub/bare/hooks/pre-commit', true],
    ['/work/repo/sub/bare/hooks/post-checkout', true],
    ['/work/repo/src/hooks/useThing.ts', false],
    ['/work/repo/src/config.ts', false],
    ['/work/repo/cargo/config.toml', false],
    ['/home/dev/.bashrc', true],
    ['/home/dev/.bash_profile', true],
    ['/home/dev/.bash_login', true],
    ['/home/dev/.bash_logout', true],
    ['/home/dev/.profile', true],
    ['/home/dev/.zshrc', true],
    ['/home/dev/.zprofile', true],
    ['/home/dev/.zshenv', true],
    ['/home/dev/.zlogin', true],
    ['/home/dev/.gitconfig', true],
    ['/home/dev/.ssh/authorized_keys', true],
    ['/home/dev/.config/git/config', true],
    ['/home/dev/.config/fish/config.fish', true],
    ['/home/dev/.switchyard/settings.json', true],
    ['/work/repo/src/a.txt', false],
    ['/work/repo/.gitignore', false],
    ['/work/repo/.github/workflows/ci.yml', false],
    // A file named `config` may be a bare repository's configuration (git finds a bare repository in any folder).
    ['/work/repo/git/config', true],
    ['/work/repo/docs/bashrc.md', false],
    ['/work/repo/.env', false],
    ['/home/dev/notes.txt', false],
    // A protected name above cwd is not a reason: the session works inside it.
    ['/srv/.git/worktrees/w/src/a.txt', false],
  ];
  it.each(rows)('%s: %s', (absolutePath, expected) => {
    const cwdHere = absolutePath.startsWith('/srv/') ? '/srv/.git/worktrees/w' : cwd;
    expect(protectedPathMatch({ absolutePath, cwd: cwdHere, home }) !== undefined).toBe(expected);
  });

  it('the walk filter never hides a protected path: below an unprotected folder, a protected path has a name it admits', () => {
    const protectedNames = rows
      .filter(([, isProtected]) => isProtected)
      .map(([absolutePath]) => path.basename(absolutePath));
    const spellings = protectedNames.flatMap((name) => [name, name.toUpperCase(), `${name}.`, `${name} `]);
    const name = fc.oneof(
      fc.constantFrom(...spellings, 'hooks', 'src', '.config', 'git', 'fish', '.cargo'),
      fc.stringMatching(/^[.a-zA-Z -]{1,12}$/),
    );
    const roots = ['/work/repo', '/home/dev', '/home/dev/.config', '/home/dev/.cargo'];
    fc.assert(
      fc.property(fc.constantFrom(...roots), fc.array(name, { minLength: 1, maxLength: 4 }), (root, segments) => {
        const walked = [root];
        for (const segment of segments) {
          const parent = walked.at(-1) ?? root;
          // The walk stops at a protected folder, so it only ever asks about children of unprotected ones.
          if (parent !== root && protectedPathMatch({ absolutePath: parent, cwd: root, home }) !== undefined) return;
          const child = path.join(parent, segment);
          if (protectedPathMatch({ absolutePath: child, cwd: root, home }) !== undefined)
            expect(mayNameProtectedPath(segment)).toBe(true);
          walked.push(child);
        }
      }),
      { numRuns: 3_000 },
    );
  });

  it('says what the path is and why writing it is not a plain edit', () => {
    expect(protectedPathMatch({ absolutePath: '/work/repo/.git/config', cwd, home })).toMatch(
      /\.git.*git runs programs/,
    );
    expect(protectedPathMatch({ absolutePath: '/home/dev/.zshrc', cwd, home })).toMatch(/shell start-up file/);
  });
});

describe('Write and Edit on protected paths', () => {
  async function decide(
    plan: ReturnType<typeof ready>,
    cwd: string,
    mode: PermissionMode,
    allow: string[] = [],
  ): Promise<string> {
    return decidePermission({
      subject: {
        toolName: plan.toolName,
        contentKind: plan.ruleKind,
        cwd,
        ...(plan.ruleContent === undefined ? {} : { content: plan.ruleContent }),
      },
      mode,
      rules: { allow: allow.map(parseRule), ask: [], deny: [] },
      remembered: [],
      readOnly: plan.flags.declaredReadOnly,
      editsInsideCwd: plan.editsInsideCwd,
      alwaysAsk: plan.alwaysAsk,
      ...(plan.permission === undefined ? {} : { facts: plan.permission }),
    }).behavior;
  }

  it('asks before writing .git/config in acceptEdits (an allow rule does not lift it), denies it in dontAsk, leaves src/a.txt silent', async () => {
    const cwd = await scratchDir();
    await mkdir(path.join(cwd, '.git'));
    const gitConfig = ready(
      await prepare(cwd, 'Write', { file_path: '.git/config', content: '[core]\n\tfsmonitor = touch /tmp/pwned\n' }),
    );
    expect(gitConfig.permission?.strongAsk?.reason).toMatch(/\.git/);
    expect(await decide(gitConfig, cwd, 'acceptEdits')).toBe('ask');
    expect(await decide(gitConfig, cwd, 'acceptEdits', ['Write(.git/**)', 'Write'])).toBe('ask');
    expect(await decide(gitConfig, cwd, 'default')).toBe('ask');
    expect(await decide(gitConfig, cwd, 'dontAsk')).toBe('deny');
    const plain = ready(await prepare(cwd, 'Write', { file_path: 'src/a.txt', content: 'x' }));
    expect(plain.permission?.strongAsk).toBeUndefined();
    expect(await decide(plain, cwd, 'acceptEdits')).toBe('allow');
  });

  it('asks for Edit of workspace settings and for a protected path reached through a symlink or another case', async () => {
    const cwd = await scratchDir();
    await mkdir(path.join(cwd, '.switchyard'));
    await mkdir(path.join(cwd, '.git'));
    await symlink(path.join(cwd, '.git'), path.join(cwd, 'innocent'));
    const edit = ready(
      await prepare(cwd, 'Edit', {
        file_path: '.switchyard/settings.json',
        old_string: '',
        new_string: '{"hooks":{}}',
      }),
    );
    expect(edit.permission?.strongAsk?.reason).toMatch(/\.switchyard/);
    const throughLink = ready(await prepare(cwd, 'Write', { file_path: 'innocent/config', content: 'x' }));
    expect(throughLink.permission?.strongAsk?.reason).toMatch(/\.git/);
    const upperCase = ready(await prepare(cwd, 'Write', { file_path: '.Git/hooks/pre-commit', content: 'x' }));
    expect(upperCase.permission?.strongAsk).toBeDefined();
    expect(await decide(throughLink, cwd, 'acceptEdits')).toBe('ask');
  });
});
