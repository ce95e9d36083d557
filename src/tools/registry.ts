import type { Tool } from './define-tool.js';

/** The tools a worker offers, by canonical name and alias. */
export class ToolRegistry {
  readonly #byName = new Map<string, Tool>();

  constructor(tools: readonly Tool[]) {
    for (const tool of tools) this.register(tool);
  }

  register(tool: Tool): void {
    for (const name of [tool.name, ...(tool.aliases ?? [])]) {
      const existing = this.#byName.get(name);
      if (existing !== undefined && existing !== tool) {
        throw new Error(`Tool name "${name}" is already used by tool "${existing.name}"`);
      }
      this.#byName.set(name, tool);
    }
  }

  /** The tool a name or alias stands for; undefined for an unknown or empty name. */
  lookup(name: string): Tool | undefined {
    return name === '' ? undefined : this.#byName.get(name);
  }

  list(): Tool[] {
    return [...new Set(this.#byName.values())];
  }
}
