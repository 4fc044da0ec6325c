import type { ProfileIdShared } from '../../src-shared/agents/profileIds.js';
import { findOnPath } from '../base/pathLookup.js';

/**
 * Which profiles' CLIs are installed: shell and custom always are. Looked up once per host process, by
 * reading PATH's folders rather than spawning `which` five times on a window's first snapshot.
 */
export class InstalledProfiles {
  private readonly known = new Map<ProfileIdShared, boolean>();

  has(id: ProfileIdShared): boolean {
    if (id === 'shell' || id === 'custom') return true;
    let known = this.known.get(id);
    if (known === undefined) {
      known = findOnPath(id) !== null; // the profile ids of the agent CLIs are their command names
      this.known.set(id, known);
    }
    return known;
  }
}
