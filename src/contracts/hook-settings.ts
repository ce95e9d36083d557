// Claude Code's `settings.json` shape for command hooks: the schema a worker reads settings files with
// (src/hooks/hook-settings-file.ts) and the client checks a session's `hooks` option with before starting it.
import { z } from 'zod';

export type HookEventName = 'PreToolUse' | 'PermissionRequest' | 'PostToolUse' | 'PostToolUseFailure';

export const HOOK_EVENT_NAMES: readonly HookEventName[] = [
  'PreToolUse',
  'PermissionRequest',
  'PostToolUse',
  'PostToolUseFailure',
];

export interface CommandHookConfig {
  type: 'command';
  command: string;
  /** Seconds, like Claude Code; default 60. */
  timeout?: number;
}

export interface HookMatcherGroup {
  /** Regular expression on the tool name (`Bash|Write`, `mcp__.*`); empty, `*` or missing: every tool. */
  matcher?: string;
  hooks: CommandHookConfig[];
}

/** Claude Code's settings shape: `{ hooks: { PreToolUse: [ { matcher: 'Bash', hooks: [ { type: 'command', command: '...' } ] } ] } }`. */
export interface HookSettings {
  hooks?: Partial<Record<HookEventName, HookMatcherGroup[]>>;
}

const commandHookSchema = z.object({
  type: z.literal('command'),
  command: z.string().min(1),
  timeout: z.number().positive().optional(),
});

/** Hooks of other types (Claude Code's `prompt`, `agent`) are dropped here and reported by `loadHookSettings`. */
const hookEntrySchema = z
  .looseObject({ type: z.string() })
  .transform((entry, context): CommandHookConfig | undefined => {
    if (entry.type !== 'command') return undefined;
    const parsed = commandHookSchema.safeParse(entry);
    if (parsed.success)
      return parsed.data.timeout === undefined ? { type: 'command', command: parsed.data.command } : parsed.data;
    for (const issue of parsed.error.issues)
      context.addIssue({ code: 'custom', message: issue.message, path: issue.path });
    return z.NEVER;
  });

const matcherGroupSchema = z
  .object({ matcher: z.string().optional(), hooks: z.array(hookEntrySchema) })
  .transform((group): HookMatcherGroup => {
    const hooks = group.hooks.filter((hook): hook is CommandHookConfig => hook !== undefined);
    return group.matcher === undefined ? { hooks } : { matcher: group.matcher, hooks };
  });

const eventGroupsSchema = z
  .array(matcherGroupSchema)
  .optional()
  .transform((groups) => groups?.filter((group) => group.hooks.length > 0));

/** zod's objects drop unknown keys: other events (`Stop`, `SessionStart`…) and other settings are ignored. */
export const hookSettingsSchema: z.ZodType<HookSettings> = z
  .object({
    hooks: z
      .object({
        PreToolUse: eventGroupsSchema,
        PermissionRequest: eventGroupsSchema,
        PostToolUse: eventGroupsSchema,
        PostToolUseFailure: eventGroupsSchema,
      })
      .optional(),
  })
  .transform((settings): HookSettings => {
    if (settings.hooks === undefined) return {};
    const hooks: Partial<Record<HookEventName, HookMatcherGroup[]>> = {};
    for (const event of HOOK_EVENT_NAMES) {
      const groups = settings.hooks[event];
      if (groups !== undefined && groups.length > 0) hooks[event] = groups;
    }
    return { hooks };
  });
