import { RE2JS } from 're2js';

/**
 * Whether a hook's matcher (a regular expression over the whole tool name, `*` or empty for all) selects a tool. The
 * matcher may come from a workspace's settings file: it runs on re2js, linear in the name, so no matcher can hold the
 * worker; one RE2 cannot compile matches only the exact name.
 */
export function hookMatches(matcher: string | undefined, toolName: string): boolean {
  if (matcher === undefined || matcher === '' || matcher === '*') return true;
  try {
    return RE2JS.compile(`^(?:${matcher})$`).matcher(toolName).find();
  } catch {
    return matcher === toolName;
  }
}
