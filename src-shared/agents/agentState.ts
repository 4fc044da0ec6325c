/** The activity words now live with the agent's life in one family (agentLife.ts); this name stays for the
 *  importers that still use it. */
export * from './agentLife.js';
