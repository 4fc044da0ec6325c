/**
 * The one request the agents' socket answers without an agent's secret: a git hook asking whether the
 * process it runs in is a person's or sits inside an agent's pane. The host answers from the caller's
 * credentials on the socket and its ancestry, never from anything the caller says (an agent can set any
 * environment variable, FORKBENCH_PERSON included).
 */
export const PERSON_CHECK_METHOD = 'person-check';

export interface PersonCheckResult {
  readonly person: boolean;
  /** The pane the caller runs in, when it is an agent's. */
  readonly pane?: string;
}
