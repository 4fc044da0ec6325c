/**
 * The last number each profile's agent names used in a Thread ("shell 3" → shell: 3), kept beside its
 * agents.json so a restarted host names the next shell "shell 4", not "shell 1" again. Shells and custom
 * commands keep no record of their own (AgentSessions stores conversations only), yet their names are in
 * the Thread's event log and journal, where a second "shell 1" would be a different agent under one name.
 *
 * One small JSON file, replaced atomically, owner-only. One that cannot be read is moved aside with a
 * message and numbering goes on from what the agent records still show: never worse than before it existed.
 */
import * as fs from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../base/atomicWrite.js';
import { readCheckedJson } from '../base/checkedJsonFile.js';
import { STORE_FILE_MODE } from './agentStore.js';

const NUMBERS_VERSION = 1;
const DIR_MODE = 0o700;
/** A profile id as the window's protocol spells one; a bound keeps a hand-edited file from growing the map. */
const ProfileKey = z.string().regex(/^[a-z][a-z0-9-]{0,31}$/);
const NumbersFileSchema = z.object({ version: z.literal(NUMBERS_VERSION), last: z.record(ProfileKey, z.number().int().min(0)) }).strict();

/** The number an agent's name ends in ("shell 12" → 12), or 0 for a name of another kind. */
export function numberInName(name: string): number {
  return Number(/ (\d{1,9})$/.exec(name)?.[1] ?? 0);
}

export class AgentNumbers {
  private readonly last = new Map<string, number>();

  private constructor(readonly path: string) {}

  static open(path: string, warn: (message: string) => void = () => undefined, now: () => number = Date.now): AgentNumbers {
    const numbers = new AgentNumbers(path);
    const file = readCheckedJson(path, NumbersFileSchema, {
      what: 'agent numbers',
      consequence: 'New agents are numbered after the ones still on record.',
      warn,
      now,
    });
    for (const [profile, n] of Object.entries(file?.last ?? {})) numbers.last.set(profile, n);
    return numbers;
  }

  /** The highest number `profile` has used. */
  lastOf(profile: string): number {
    return this.last.get(profile) ?? 0;
  }

  /** An agent of this name exists or existed (restored, adopted): numbers count on after it. */
  saw(profile: string, name: string): void {
    this.sawAll([{ profile, name }]);
  }

  /** As `saw`, for every agent a Thread opens with: the file is written once, if a number rose. */
  sawAll(agents: Iterable<{ profile: string; name: string }>): void {
    let rose = false;
    for (const { profile, name } of agents) {
      const n = numberInName(name);
      if (n <= this.lastOf(profile)) continue;
      this.last.set(profile, n);
      rose = true;
    }
    if (rose) this.save();
  }

  /** The next number for `profile`, recorded before anything is named with it: never given out twice. */
  next(profile: string): number {
    const n = this.lastOf(profile) + 1;
    this.last.set(profile, n);
    this.save();
    return n;
  }

  private save(): void {
    fs.mkdirSync(dirname(this.path), { recursive: true, mode: DIR_MODE });
    const body = JSON.stringify({ version: NUMBERS_VERSION, last: Object.fromEntries(this.last) });
    // Not fsynced: a number lost to a power cut only repeats a name, which is what this file makes rare.
    writeFileAtomic(this.path, `${body}\n`, { mode: STORE_FILE_MODE });
  }
}
