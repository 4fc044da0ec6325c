/**
 * Set up in every worker of every tier (vitest.config.ts's setupFiles): a disposable added to a store that is
 * already disposed is said on the console, where a test that leaks one shows it. Production code leaves the
 * warning off (src-shared/lifecycle/disposableStore.ts); it no longer sniffs the environment for a test run.
 */
import { setLateAddWarning } from '../../src-shared/lifecycle/disposableStore.js';

setLateAddWarning((message) => console.warn(message));
