import type { TaskState } from '../board/model.js';

/**
 * The notices a person gets (a claim that lapsed, a board that turned read-only, an agent that exited). The
 * host is their one source: it builds each here and pushes it to the windows of its Thread, which show it
 * (and raise the one OS notification); no window builds a notice of its own.
 */
export interface Notice {
  /** What the notice concerns (`lapse:T-3`, `exit:shell 1`): the same thing is not repeated. */
  about: string;
  title: string;
  body: string;
}

/** Where a lapsed task went, in a person's words. */
function whereItWent(to: TaskState): string {
  if (to === 'needs-attention') return 'its attempts are used up, so it waits in Needs attention for a person';
  if (to === 'open') return 'the task is back in the backlog';
  return `the task is in ${to}`;
}

export function lapseNotice(taskId: string, holder: string, title: string, to: TaskState): Notice {
  return { about: `lapse:${taskId}`, title: `Claim lapsed: ${taskId}`, body: `${holder}'s lease on "${title}" ran out; ${whereItWent(to)}.` };
}

export function readOnlyNotice(threadKey: string, folderName: string, reason: string): Notice {
  return { about: `read-only:${threadKey}`, title: `Board read-only: ${folderName}`, body: reason };
}

export function agentExitedNotice(name: string, exit: { code: number; signal: number | null } | null): Notice {
  const how = exit?.signal ? `was killed by signal ${exit.signal}` : `exited with code ${exit?.code}`;
  return { about: `exit:${name}`, title: `Agent exited: ${name}`, body: `${name} ${how}.` };
}
