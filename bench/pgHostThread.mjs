// A host thread of the PostgreSQL board's bench (pgHostThread.ts): a worker does not inherit the main
// thread's `--import tsx`, so it registers tsx itself before loading the TypeScript.
import { register } from 'tsx/esm/api';

register();
await import('./pgHostThread.ts');
