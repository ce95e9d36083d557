/**
 * One read confinement for the tools that read many files: Grep and Glob skip every file (and directory) that a
 * `Read(...)` deny rule of the session names, as Read itself would be denied it. A bare `Read` deny rule names every
 * path. The permission decision about the call's own path is made elsewhere; this is the walk's half.
 */
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { parseRule, ruleMatches } from '../../contracts/permission-rules.js';
import type { ParsedRule } from '../../contracts/permission-rules.js';

export interface ReadDenyFilter {
  /** The deny rule naming any of these spellings of one path (as walked, through the real root, a link's target). */
  deniedBy(spellings: readonly string[]): string | undefined;
}

/**
 * The filter for a session's deny rules, or undefined when no `Read` rule is among them. Rules are matched against
 * the session's cwd as given and as resolved through symlinks, so a path spelled either way is caught.
 */
export async function createReadDenyFilter(options: {
  cwd: string;
  denyRules: readonly string[];
}): Promise<ReadDenyFilter | undefined> {
  const rules = options.denyRules.flatMap((text): ParsedRule[] => {
    try {
      const rule = parseRule(text);
      return rule.toolName === 'Read' ? [rule] : [];
    } catch {
      // The session's rules were checked when it started; an unparsable one names nothing.
      return [];
    }
  });
  if (rules.length === 0) return undefined;
  const cwd = path.resolve(options.cwd);
  const realCwd = await realpath(cwd).catch(() => cwd);
  const roots = realCwd === cwd ? [cwd] : [cwd, realCwd];
  return {
    deniedBy(spellings) {
      for (const rule of rules) {
        for (const root of roots) {
          if (
            spellings.some((content) =>
              ruleMatches(rule, { toolName: 'Read', content, contentKind: 'path', cwd: root }),
            )
          )
            return rule.source;
        }
      }
      return undefined;
    },
  };
}
