import type { Notice } from '../../src-shared/notices/notices.js';

/**
 * How the page shows notices (issue 44, "notices once"): each notice once, by its id, in one stack, and
 * notices of one kind (six lapses in a row, three agents exiting) collapsed into one line that counts them,
 * so a burst cannot stack over the board. Pure: the stack is a function of the notices it is given.
 */
export const NoticeDisplay = {
  /** Lines the stack shows at most: a person reads three at a glance; past them the log has every one (each
   *  notice is about a board event or an agent the log and the tabs show). */
  maxLines: 3,
  /** Task ids a collapsed line names before it says how many more. */
  maxNamed: 6,
} as const;

/** One line of the stack: one notice, or every current one of a kind. */
export interface NoticeLine {
  /** The kind (the part of `about` before its first colon: `lapse`, `exit`, `waiting`, `sent-back`). */
  readonly kind: string;
  /** The notices it stands for, oldest first. */
  readonly ids: readonly string[];
  readonly title: string;
  readonly body: string;
  /** The newest notice's agent, for a click that shows its tab. */
  readonly agentId?: string;
}

/** A kind's collapsed title for `n` of them; a kind not named here reads "n notices: <newest title>". */
const MANY: Record<string, (n: number) => string> = {
  lapse: (n) => `${n} claims lapsed`,
  exit: (n) => `${n} agents exited`,
  waiting: (n) => `${n} agents are waiting for you`,
  done: (n) => `${n} agents finished their turn`,
  'sent-back': (n) => `${n} approvals came back from the merge queue`,
};

/** Kinds whose `about` names something a person reads (a task id, an agent's name), listed on a collapsed line. */
const READABLE_SUBJECT = new Set(['lapse', 'sent-back', 'exit']);

const kindOf = (n: Pick<Notice, 'about'>): string => n.about.split(':', 1)[0] ?? n.about;
/** What a notice is about, past its kind (`T-3` of `lapse:T-3`). */
const subjectOf = (n: Pick<Notice, 'about'>): string => n.about.slice(n.about.indexOf(':') + 1);

/** The stack's lines for `notices` (oldest first, each id once), newest kind first, at most `maxLines`, and
 *  how many notices the lines left out. */
export function noticeLines(notices: readonly Notice[], maxLines: number = NoticeDisplay.maxLines): { lines: NoticeLine[]; hidden: number } {
  const seen = new Set<string>();
  const byKind = new Map<string, Notice[]>();
  for (const n of notices) {
    if (seen.has(n.id)) continue;
    seen.add(n.id);
    const k = kindOf(n);
    // Re-inserted, so the map's order is the order of each kind's newest notice.
    const list = byKind.get(k) ?? [];
    byKind.delete(k);
    byKind.set(k, [...list, n]);
  }
  const all = [...byKind.entries()].reverse().map(([kind, list]) => lineOf(kind, list));
  const lines = all.slice(0, maxLines);
  return { lines, hidden: all.slice(maxLines).reduce((sum, l) => sum + l.ids.length, 0) };
}

function lineOf(kind: string, list: readonly Notice[]): NoticeLine {
  const newest = list[list.length - 1] as Notice;
  const agent = newest.agentId ? { agentId: newest.agentId } : {};
  if (list.length === 1) return { kind, ids: [newest.id], title: newest.title, body: newest.body, ...agent };
  const subjects = list.map(subjectOf);
  const named = subjects.slice(-NoticeDisplay.maxNamed).join(', ');
  const more = subjects.length > NoticeDisplay.maxNamed ? ` and ${subjects.length - NoticeDisplay.maxNamed} before` : '';
  const title = MANY[kind]?.(list.length) ?? `${list.length} notices: ${newest.title}`;
  // The newest in full (its own words), the rest by what they are about: no line says the same twice.
  const body = `${READABLE_SUBJECT.has(kind) ? `${named}${more}. ` : ''}Newest: ${newest.title} — ${newest.body}`;
  return { kind, ids: list.map((n) => n.id), title, body, ...agent };
}
