import type { Tool } from '../../tools/define-tool.js';
import type { JsonSchema, ModelProvider } from './shared.js';
import { ToolExportError, isRecord } from './shared.js';

/** What each provider accepts as a tool name (from its API reference). */
export const toolNameRules: Readonly<Record<ModelProvider, { pattern: RegExp; text: string }>> = {
  anthropic: { pattern: /^[a-zA-Z0-9_-]{1,64}$/, text: 'names must match ^[a-zA-Z0-9_-]{1,64}$' },
  'openai-chat': { pattern: /^[a-zA-Z0-9_-]{1,64}$/, text: 'names must match ^[a-zA-Z0-9_-]{1,64}$' },
  'openai-responses': { pattern: /^[a-zA-Z0-9_-]{1,64}$/, text: 'names must match ^[a-zA-Z0-9_-]{1,64}$' },
  // Gemini: "must start with a letter or an underscore; a-z, A-Z, 0-9, underscores, dots, colons and dashes; at most 64".
  gemini: { pattern: /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/, text: 'names must match ^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$' },
  // The AI SDK passes names on to whichever provider it calls: the strictest rule of them.
  'ai-sdk': { pattern: /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/, text: 'names must match ^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$' },
};

/** Anthropic refuses a request whose input schema has a property key outside this pattern. */
const anthropicPropertyKey = /^[a-zA-Z0-9_.-]{1,64}$/;

/** FNV-1a, 32 bits: a short stable suffix that keeps shortened names apart (no Node crypto needed). */
function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

function safeName(name: string, provider: ModelProvider): string {
  const allowedCharacter = provider === 'gemini' ? /[a-zA-Z0-9_.:-]/ : /[a-zA-Z0-9_-]/;
  let safe = [...name].map((character) => (allowedCharacter.test(character) ? character : '_')).join('');
  if (!/^[a-zA-Z_]/.test(safe) && (provider === 'gemini' || provider === 'ai-sdk')) safe = `_${safe}`;
  if (safe.length > 64) safe = `${safe.slice(0, 55)}_${shortHash(name)}`;
  return safe;
}

/**
 * The names a provider sees for a set of tools, and the way back. A name the provider accepts is kept; any other
 * gets a safe name (forbidden characters become `_`, a long name is shortened with a hash of the original), so
 * `mcp.server:tool` is `mcp_server_tool` for Anthropic. The calls-in functions take the same tools and map names
 * back, so Switchyard always sees the real name.
 */
export interface ToolNameMap {
  toModel(name: string): string;
  fromModel(name: string): string;
}

export function toolNameMap(tools: readonly Tool[] | undefined, provider: ModelProvider): ToolNameMap {
  const toModel = new Map<string, string>();
  const fromModel = new Map<string, string>();
  const rule = toolNameRules[provider];
  const taken = new Set((tools ?? []).filter((tool) => rule.pattern.test(tool.name)).map((tool) => tool.name));
  for (const tool of tools ?? []) {
    if (rule.pattern.test(tool.name)) continue;
    let name = safeName(tool.name, provider);
    if (taken.has(name)) name = `${name.slice(0, 55)}_${shortHash(tool.name)}`;
    if (taken.has(name) || !rule.pattern.test(name))
      throw new ToolExportError(tool.name, provider, `${rule.text}, and no safe name could be made`);
    taken.add(name);
    toModel.set(tool.name, name);
    fromModel.set(name, tool.name);
  }
  return { toModel: (name) => toModel.get(name) ?? name, fromModel: (name) => fromModel.get(name) ?? name };
}

/** Walks every sub-schema, with a path for messages. */
function eachSchema(node: unknown, path: string, visit: (schema: JsonSchema, path: string) => void): void {
  if (Array.isArray(node)) {
    node.forEach((item, index) => eachSchema(item, `${path}[${index}]`, visit));
    return;
  }
  if (!isRecord(node)) return;
  visit(node, path);
  for (const [key, value] of Object.entries(node)) {
    if (key === 'properties' || key === '$defs' || key === 'definitions' || key === 'patternProperties') {
      if (isRecord(value))
        for (const [name, child] of Object.entries(value)) eachSchema(child, `${path}.${key}.${name}`, visit);
    } else if (
      key !== 'enum' &&
      key !== 'const' &&
      key !== 'default' &&
      key !== 'examples' &&
      typeof value === 'object'
    ) {
      eachSchema(value, `${path}.${key}`, visit);
    }
  }
}

/**
 * Checks a tool's (copied, cleaned) input schema against the provider's rules; throws a `ToolExportError` naming the
 * tool and the rule. Every provider wants an object schema at the root; Anthropic wants property keys matching
 * `^[a-zA-Z0-9_.-]{1,64}$` (one bad MCP tool would otherwise fail the whole request).
 */
export function checkToolSchema(options: { toolName: string; schema: JsonSchema; provider: ModelProvider }): void {
  const { toolName, schema, provider } = options;
  if (schema.type !== 'object')
    throw new ToolExportError(
      toolName,
      provider,
      `the input schema must have "type": "object" at its root (found ${JSON.stringify(schema.type ?? null)})`,
    );
  if (provider !== 'anthropic') return;
  eachSchema(schema, '$', (node, path) => {
    if (!isRecord(node.properties)) return;
    for (const key of Object.keys(node.properties)) {
      if (!anthropicPropertyKey.test(key))
        throw new ToolExportError(
          toolName,
          provider,
          `property key ${JSON.stringify(key)} at ${path}.properties must match ^[a-zA-Z0-9_.-]{1,64}$`,
        );
    }
  });
}
