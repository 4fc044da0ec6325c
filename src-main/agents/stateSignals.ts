import type { AgentState } from '../../src-shared/agents/agentLife.js';
import type { ProfileIdShared } from '../../src-shared/agents/profileIds.js';
import type { TerminalSignal } from '../pty/headlessMirror.js';
import type { StateSignal } from './stateTracker.js';

/**
 * What each CLI's terminal signals and screen mean, per profile. Hooks (cliProfiles' hook files) are the
 * strong signal where a CLI has them; these are the weaker ones, read off the host's mirror of the pane.
 * Phrases are the CLIs' own (as the installed versions word them); a CLI that rewords a dialog loses only
 * the screen guess, never a hook.
 */
export interface ProfileSignals {
  /** An OSC 9 / OSC 777 notification means the agent waits for the person: every one, or those whose text
   *  matches (a CLI that also notifies for other things). Off where the CLI's hooks say it better: Claude
   *  Code's notifications include the 60 s idle timer that fires mid-thought. */
  readonly notifyWaits: boolean | RegExp;
  /** The bell means the agent waits (shells ring it for a failed completion: off there). */
  readonly bellWaits: boolean;
  /** What a program status's state (OSC 7501;state=S) means, where the CLI sends one. */
  readonly programStates?: Readonly<Record<string, AgentState>>;
  /** The shell marks its prompt (OSC 133, from the start-up file its profile writes): at the prompt it is
   *  idle, from the moment a command runs it is working. */
  readonly promptMarks?: boolean;
  /** Window titles that say what the agent does. */
  readonly titles: readonly { readonly pattern: RegExp; readonly state: AgentState }[];
  /** Lines of a prompt that waits for the person, as the CLI shows it: the last resort. */
  readonly prompts: readonly RegExp[];
  /** A hook's needs-input counts only if a prompt is still on screen this long after (Codex's auto-review
   *  grants some approvals its PermissionRequest hook already announced). */
  readonly confirmHookWaitMs?: number;
}

const NONE: ProfileSignals = { notifyWaits: false, bellWaits: false, titles: [], prompts: [] };

export const PROFILE_SIGNALS: Record<ProfileIdShared, ProfileSignals> = {
  claude: {
    notifyWaits: false,
    bellWaits: false,
    titles: [],
    // The permission dialogs (hooked too) and the question dialogs of AskUserQuestion (no reliable hook).
    prompts: [/Do you want to (?:proceed|make this edit|create|allow|overwrite)/, /Enter to select · .*Esc to cancel/],
  },
  codex: {
    // Its profile turns its notifications on (tui.notifications): an approval request's names the command
    // ("Approval requested: touch x"); a finished turn's is the answer's text, which is no question.
    notifyWaits: /^Approval requested: /,
    bellWaits: false,
    // Codex 0.171 reports its turn as OSC 7501 whatever its settings: working, blocked (an approval or a
    // question waits on the person, before its dialog is drawn), done when the turn ends. Not read: idle,
    // which it says as it starts and between its own start-up steps (a pane that has done nothing has
    // finished no turn: the window would tell the person so), and clear on exit.
    programStates: { working: 'working', blocked: 'needs-input', done: 'idle' },
    titles: [],
    prompts: [/Would you like to (?:run the following command|make the following edits|grant these permissions|send input to)/],
    // Long enough for the auto-review to grant and the dialog to close (it answers within a model call's
    // first tokens, ~100 ms on a fast link), short of the 1 s a person should wait to be told.
    confirmHookWaitMs: 400,
  },
  gemini: {
    notifyWaits: true,
    bellWaits: false,
    // Gemini CLI's dynamic title: "✋  Action Required (dir)", "✦  Working… (dir)", "◇  Ready (dir)".
    titles: [
      { pattern: /Action Required/, state: 'needs-input' },
      { pattern: /Working…/, state: 'working' },
      { pattern: /◇\s+Ready/, state: 'idle' },
    ],
    prompts: [/Allow execution of/, /Apply this change\?/, /Do you want to proceed\?/],
  },
  opencode: {
    notifyWaits: true,
    bellWaits: false,
    titles: [],
    prompts: [/Permission required/],
  },
  aider: {
    notifyWaits: true,
    // Aider rings the bell when it waits for input with --notifications; a rung bell is a question there.
    bellWaits: true,
    titles: [],
    prompts: [/\(Y\)es\/\(N\)o/],
  },
  shell: { ...NONE, promptMarks: true },
  custom: { ...NONE, notifyWaits: true },
};

/** The first visible line that is a known prompt, or null. */
export function promptOnScreen(signals: ProfileSignals, lines: readonly string[]): string | null {
  for (const l of lines) if (signals.prompts.some((p) => p.test(l))) return l.trim();
  return null;
}

/** What a window title says, or null when it says nothing this profile knows. */
function stateOfTitle(signals: ProfileSignals, title: string): AgentState | null {
  return signals.titles.find((t) => t.pattern.test(title))?.state ?? null;
}

/** What a terminal signal says about the agent under this profile, or null when it says nothing. */
export function stateOfSignal(signals: ProfileSignals, sig: TerminalSignal): StateSignal | null {
  switch (sig.kind) {
    case 'notify': {
      const w = signals.notifyWaits;
      return w === true || (w instanceof RegExp && w.test(sig.text)) ? { state: 'needs-input', source: 'terminal', text: sig.text } : null;
    }
    case 'bell':
      return signals.bellWaits ? { state: 'needs-input', source: 'terminal' } : null;
    case 'title': {
      const state = stateOfTitle(signals, sig.text);
      return state ? { state, source: 'terminal', text: state === 'needs-input' ? sig.text : null } : null;
    }
    case 'status': {
      const state = signals.programStates?.[sig.state];
      return state ? { state, source: 'terminal' } : null;
    }
    case 'prompt':
      // B (the command line starts) and D (the last command finished) add nothing to A and C.
      if (!signals.promptMarks || sig.mark === 'B' || sig.mark === 'D') return null;
      return sig.mark === 'A' ? { state: 'idle', source: 'terminal', atPrompt: true } : { state: 'working', source: 'terminal' };
  }
}
