// Tests call tools directly, and change this process's environment between calls (a limit, the sandbox mode, the
// variables a child inherits): here the tools resolve their settings from it at each use, through the same function a
// worker resolves them with once, at its start (src/config/settings.ts). The harness hands its workers the same
// source (`toolSettings`), since a worker's activities run with their worker's settings, not the process's.
import { toolSettingsFromEnvironment } from '../../src/config/settings.js';
import { useToolSettings } from '../../src/tools/tool-settings.js';
import type { ToolSettings } from '../../src/tools/tool-settings.js';

/** The tools' settings as this process's environment sets them now. */
export function liveToolSettings(): ToolSettings {
  return toolSettingsFromEnvironment(process.env);
}

/** Hands this process's tools settings that follow its environment. */
export function useLiveToolSettings(): void {
  useToolSettings(liveToolSettings);
}

useLiveToolSettings();
