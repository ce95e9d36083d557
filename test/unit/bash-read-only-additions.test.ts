/**
 * The programs added to Bash's read-only table, each with the attacks its option checks answer: what is read-only
 * runs unasked and joins a read-only group; what can write, run a program, never end or reach another daemon is not.
 * The permission rows plan a real Bash call and decide as the session workflow does, so the Read deny rules and the
 * read checks still judge every path these programs read.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseRule } from '../../src/contracts/permission-rules.js';
import type { PermissionMode } from '../../src/contracts/session.js';
import { decidePermission } from '../../src/contracts/decide-permission.js';
import { bashTool } from '../../src/tools/builtin/bash.js';
import { classifyCommand } from '../../src/tools/shell/index.js';
import { scratchDir } from '../support/scratch.js';
import { planner, ready } from '../support/tool-plans.js';

/** [command, read-only?, reason pattern when not]. */
const table: Array<[string, true] | [string, false, RegExp]> = [
  ['sleep 0.2', true],
  ['sleep 0.2; cat a.txt', true],
  ['sleep 100000', true],
  ['seq 1 10', true],
  ["seq -f '%03g' -s , 1 5", true],
  ['uname -a', true],
  ['id -un', true],
  ['nproc', true],
  ['uptime', true],
  ['free -h', true],
  ['free -c 2', true],
  ['groups', true],
  ['locale', true],
  ['getconf PAGE_SIZE', true],
  ['strings -n 8 a.bin', true],
  ['od -A x -t x1z a.bin', true],
  ['hexdump -C a.bin', true],
  ['hexdump -n 16 -e \'16/1 "%02x" "\\n"\' a.bin', true],
  ['paste -d , a.txt b.txt', true],
  ['tac a.txt', true],
  ['rev a.txt', true],
  ['fold -w 80 a.txt', true],
  ['expand -t 4 a.txt | unexpand -a', true],
  ['fmt -w 60 a.txt', true],
  ['comm -12 a.txt b.txt', true],
  ['numfmt --to=iec 1048576', true],
  ['tsort deps.txt', true],
  ['pr -2 -t a.txt', true],
  ['expr 1 + 2', true],
  ["expr 'abc' : 'a\\(.*\\)'", true],
  ['test -f a.txt && cat a.txt', true],
  ['test -d src || echo missing', true],
  ['type ls', true],
  ['type -a cat', true],
  ['cal 2026', true],
  ['docker ps', true],
  ['docker ps -a --no-trunc', true],
  ["docker ps --format '{{.Names}}' --filter status=running", true],
  ['docker images', true],
  ["docker images -q --filter 'dangling=true'", true],

  // `;` joins read-only commands only; every part is judged.
  ['sleep 1; rm -rf x', false, /`rm` is not on the read-only list/],
  ['sleep 1;', false, /empty command at the end/],
  ['sleep 1 & cat a.txt', false, /background/],
  // expr and test cannot write: only what the shell itself would do around them could, and that is refused.
  ['expr 1 + 2 > out.txt', false, /redirection to a file/],
  ['expr $(rm x) + 1', false, /substitution/],
  ['test -f a.txt > flag', false, /redirection to a file/],
  ['test -n "$(curl evil.example)"', false, /substitution|double quotes/],
  // free -s repeats forever, like tail -f.
  ['free -s 1', false, /never ends/],
  ['free -hs1', false, /never ends/],
  ['free --seconds=1', false, /never ends/],
  ['free --sec 1', false, /never ends/],
  // hexdump -f reads a format file the path checks do not see as a read.
  ['hexdump -f fmt.txt a.bin', false, /format file/],
  ['hexdump -Cf fmt.txt a.bin', false, /format file/],
  ['hexdump --format-file=fmt.txt a.bin', false, /format file/],
  // docker: only `ps` and `images`, only their listing options, never another daemon.
  ['docker run alpine', false, /`docker run` is not read-only/],
  ['docker exec c ls', false, /`docker exec` is not read-only/],
  ['docker', false, /without a subcommand/],
  ['docker -H tcp://evil.example:2375 ps', false, /before the subcommand/],
  ['docker --host=unix:///tmp/x.sock images', false, /before the subcommand/],
  ['docker --context prod ps', false, /before the subcommand/],
  ['docker --config /tmp/cfg ps', false, /before the subcommand/],
  ['docker ps -H tcp://evil.example:2375', false, /`docker ps -H`/],
  ['docker ps --host tcp://evil.example', false, /`docker ps --host`/],
  ['docker images --output x', false, /`docker images --output`/],
  ['docker ps container-name', false, /`docker ps container-name`/],
  ['docker image rm x', false, /`docker image` is not read-only/],
  ['docker system prune -f', false, /`docker system` is not read-only/],
  // Globs that could become options stay refused for every addition.
  ['od *', false, /glob/],
  ['docker ps -*', false, /glob/],
];

describe('the read-only table additions', () => {
  it.each(table)('%s', (command, readOnly, reason?: RegExp) => {
    const classification = classifyCommand(command);
    expect(classification.readOnly, classification.reason).toBe(readOnly);
    if (reason !== undefined) expect(classification.reason).toMatch(reason);
  });
});

type Behavior = 'allow' | 'ask' | 'deny';
const plan = planner([bashTool]);
let cwd = '';

async function decide(command: string, options: { deny?: string[]; mode?: PermissionMode } = {}): Promise<Behavior> {
  const planned = ready(await plan(cwd, 'Bash', { command }, []));
  const decision = decidePermission({
    subject: {
      toolName: planned.toolName,
      contentKind: planned.ruleKind,
      cwd,
      ...(planned.ruleContent === undefined ? {} : { content: planned.ruleContent }),
    },
    mode: options.mode ?? 'default',
    rules: { allow: [], ask: [], deny: (options.deny ?? []).map(parseRule) },
    remembered: [],
    readOnly: planned.flags.declaredReadOnly,
    editsInsideCwd: planned.editsInsideCwd,
    alwaysAsk: planned.alwaysAsk,
    ...(planned.permission === undefined ? {} : { facts: planned.permission }),
  });
  return decision.behavior;
}

describe('the paths the additions read are judged like cat', () => {
  beforeAll(async () => {
    cwd = await scratchDir('switchyard-read-only-additions-');
    await mkdir(path.join(cwd, 'keys'));
    await writeFile(path.join(cwd, 'keys', 'id_rsa'), 'PRIVATE\n');
    await writeFile(path.join(cwd, 'a.txt'), 'a\n');
  });

  it.each([
    ['od -c keys/id_rsa', { deny: ['Read(keys/**)'] }, 'deny'],
    ['hexdump -C keys/id_rsa', { deny: ['Read(keys/**)'] }, 'deny'],
    ['strings keys/id_rsa', { deny: ['Read(keys/**)'] }, 'deny'],
    ['tac keys/id_rsa', { deny: ['Read(keys/**)'] }, 'deny'],
    ['pr -t keys/id_rsa', { deny: ['Read(keys/**)'] }, 'deny'],
    ['tsort keys/id_rsa', { deny: ['Read(keys/**)'] }, 'deny'],
    ['sleep 0.2; od -c keys/id_rsa', { deny: ['Read(keys/**)'] }, 'deny'],
    ['od -c keys/id_rsa', { deny: ['Read(keys/**)'], mode: 'bypassPermissions' as const }, 'deny'],
    ['od -c /root/.ssh/id_rsa', {}, 'ask'],
    ['hexdump -C ~/.ssh/id_rsa', { mode: 'dontAsk' as const }, 'deny'],
    ['strings /etc/shadow', {}, 'ask'],
    ['pr /etc/passwd', {}, 'ask'],
    ['sleep 0.2; cat a.txt', {}, 'allow'],
    ['od -c a.txt', {}, 'allow'],
    ['docker ps', {}, 'allow'],
    ['docker run --rm alpine cat /etc/passwd', {}, 'ask'],
    ['docker -H tcp://evil.example ps', {}, 'ask'],
    ['expr 1 + 1', {}, 'allow'],
    ['test -e a.txt', {}, 'allow'],
  ] as Array<[string, { deny?: string[]; mode?: PermissionMode }, Behavior]>)(
    '%s %j → %s',
    async (command, options, expected) => {
      expect(await decide(command, options)).toBe(expected);
    },
  );
});
