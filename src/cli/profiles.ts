// Where `secinv api` finds its server and key: --url/--key, then a profile named by --profile or SECINV_PROFILE, then
// SECINV_URL/SECINV_API_KEY, then the `default` profile (docs/DESIGN.md §32). Profiles live in one JSON file, mode 0600,
// that holds keys: it is written only by `secinv api configure`, and a file others may read is warned about.
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ClientSettings } from '../config.js';
import { fileErrorReason, UserError } from '../domain/errors.js';
import type { Io } from './io.js';

export interface Profile {
  url?: string;
  key?: string;
}

interface ProfileFile {
  profiles: Record<string, Profile>;
}

/** The profiles file, or none when it does not exist; a file readable by others is warned about on stderr. */
export function readProfiles(file: string, io: Io): ProfileFile | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new UserError(`cannot read the profiles file ${file}: ${fileErrorReason(error)}`);
  }
  const mode = statSync(file).mode & 0o777;
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    io.stderr.write(
      `secinv: warning: ${file} holds API keys and other users may read it (mode ${mode.toString(8)}): chmod 600 ${file}\n`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UserError(`the profiles file ${file} is not JSON: ${(error as Error).message}`);
  }
  const profiles = (parsed as Partial<ProfileFile> | null)?.profiles;
  if (typeof profiles !== 'object' || profiles === null || Array.isArray(profiles))
    throw new UserError(`the profiles file ${file} has no "profiles" object`);
  return { profiles };
}

export interface Connection {
  url: string;
  key: string;
  /** Where the key came from, to name in a message when the server refuses it (never the key itself). */
  keySource: string;
}

export function resolveConnection(settings: ClientSettings, io: Io): Connection {
  const file = readProfiles(settings.configFile, io);
  const profile = file?.profiles[settings.profile];
  if (settings.explicitProfile && profile === undefined) {
    const known = Object.keys(file?.profiles ?? {});
    throw new UserError(
      `unknown profile '${settings.profile}' in ${settings.configFile} (${known.length > 0 ? `profiles: ${known.join(', ')}` : 'none configured'}); create it with: secinv api configure --profile ${settings.profile} --url URL`,
    );
  }
  const named = settings.explicitProfile ? profile : undefined;
  const fallback = settings.explicitProfile ? undefined : profile;
  const pick = (what: 'url' | 'key', variable: string): [string, string] | undefined => {
    const choices: [string | undefined, string][] = [
      [settings.flags[what], `--${what}`],
      [named?.[what], `profile '${settings.profile}' of ${settings.configFile}`],
      [settings.env[what], variable],
      [fallback?.[what], `profile 'default' of ${settings.configFile}`],
    ];
    const found = choices.find(([value]) => value !== undefined && value !== '');
    return found === undefined ? undefined : [found[0]!, found[1]];
  };
  const url = pick('url', 'SECINV_URL');
  const key = pick('key', 'SECINV_API_KEY');
  const missing = [url ? null : '--url / SECINV_URL', key ? null : '--key / SECINV_API_KEY'].filter((m) => m !== null);
  if (!url || !key) {
    throw new UserError(
      `no server configured: give ${missing.join(' and ')}, or a profile in ${settings.configFile} (secinv api configure --profile ${settings.profile} --url URL)`,
    );
  }
  if (!/^https?:\/\//i.test(url[0]))
    throw new UserError(`the server URL must start with http:// or https://: ${url[0]}`);
  return { url: url[0], key: key[0], keySource: key[1] };
}

/** Saves a profile (creating the file and its folder, private to the user); returns nothing that holds the key. */
export function saveProfile(file: string, name: string, profile: Profile, io: Io): void {
  const current = readProfiles(file, io) ?? { profiles: {} };
  current.profiles[name] = { ...current.profiles[name], ...profile };
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, `${JSON.stringify(current, null, 2)}\n`, { mode: 0o600 });
  // writeFileSync's mode applies to a new file only: an existing one keeps its mode unless changed.
  chmodSync(file, 0o600);
}
