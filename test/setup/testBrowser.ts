/**
 * The e2e tier's global set-up (vitest.config.ts): a browser — the machine's Chromium or Chrome, else the npm
 * package's (e2e/npmChromium.ts), named to the workers in FORKBENCH_CHROMIUM so they do not unpack it again.
 * Only the e2e tier prepares one: a run of the other tiers never unpacks a browser it does not use.
 */
import { provideChromium } from '../../e2e/npmChromium.js';

export default async function setup(): Promise<void> {
  await provideChromium();
}
