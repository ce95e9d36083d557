/** A setting that cannot be used (a named file that cannot be read or parsed, a bad value): startup stops with it. */
export class SettingsError extends Error {
  override readonly name = 'SettingsError';
}
