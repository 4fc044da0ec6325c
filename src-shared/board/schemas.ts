import { z } from 'zod';
import { Limits } from './limits.js';
import { ParkedWorkDefaults } from '../git/parkedWork.js';
import { parseAfterText } from './dependencies.js';
import { PROFILE_IDS } from '../agents/profileIds.js';
import { DISPATCH_MODES, DispatchConstants, LABEL_PREFIX, parseLabelsText, parseTakersText } from './dispatch.js';
import { controlProblem, type ControlsAllowed } from '../text/controlChars.js';
import { PriceLimits } from '../usage/prices.js';
import { BUDGET_UNITS, BudgetLimits } from '../usage/budgets.js';

/**
 * Runtime schemas for everything that crosses into the board from outside: a window, an agent's socket,
 * the CLI, MCP. The engine checks its text inputs with these too, so a limit lives in exactly one place.
 */
const text = (max: number, what: string) => z.string().max(max, `${what} is longer than ${max} characters`).superRefine(noControls(what, 'tab-newline'));

/**
 * Board text reaches every agent's terminal (`forkbench board`/`show`, MCP results, assignments typed into
 * panes), so it may not carry what a terminal acts on: escape sequences, C1 controls, bidi overrides
 * (src-shared/text/controlChars.ts says which and why). Refused with the character and where it is, so the
 * sender can find it.
 */
function noControls(what: string, allowed: ControlsAllowed) {
  return (s: string, ctx: z.RefinementCtx) => {
    const problem = controlProblem(s, `the ${what}`, allowed);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  };
}

export const TitleSchema = z
  .string()
  .transform((s) => s.trim())
  .pipe(
    z
      .string()
      .min(1, 'title is empty')
      .max(Limits.maxTitleChars, `title is longer than ${Limits.maxTitleChars} characters`)
      .refine((s) => !/[\r\n]/.test(s), 'title must be one line')
      .superRefine(noControls('title', 'none')),
  );
export const BodySchema = text(Limits.maxBodyChars, 'body');
export const NoteTextSchema = z
  .string()
  .min(1, 'note is empty')
  .max(Limits.maxNoteChars, `note is longer than ${Limits.maxNoteChars} characters`)
  .superRefine(noControls('note', 'tab-newline'));
export const GoalSchema = text(Limits.maxGoalChars, 'goal');
export const ReasonSchema = text(Limits.maxNoteChars, 'reason');
/** Why a reject with no reason is refused: the holder gets the work back and must be told what to change. */
export const REJECT_REASON_MISSING = 'a reject needs a reason: say what to change, so whoever takes the task back knows what to do';
/** A reject's reason: a reason, and not blank (the board checks the same in LeaseEngine.rejectReview). */
export const RejectReasonSchema = ReasonSchema.refine((s) => s.trim().length > 0, REJECT_REASON_MISSING);
export const VerifySchema = text(Limits.maxVerifyChars, 'verify command').nullable();
export const TaskIdSchema = z.string().regex(/^T-\d{1,9}$/, 'a task id looks like T-12');
/** The tasks one task waits on (issue 34): ids, each once, in the order given. */
export const AfterSchema = z
  .array(TaskIdSchema)
  .max(Limits.maxAfter, `a task waits on at most ${Limits.maxAfter} others`)
  .transform((ids) => [...new Set(ids)]);
/** What a task waits on as the CLI and MCP carry it: one string, `T-3,T-5` (parseAfterText: spaces and case
 *  are forgiven), '' or `none` for none; or the list itself. Either reads as the list, so a value already read (MCP's server
 *  checks a tool call's arguments before it forwards them to the board, which checks them again) reads the same. */
export const AfterTextSchema = z
  .union([
    z.array(z.string()),
    z
      .string()
      .max(Limits.maxAfter * 12, `a list of at most ${Limits.maxAfter} task ids`)
      .transform(parseAfterText),
  ])
  .pipe(AfterSchema);
export const AgentIdSchema = z
  .string()
  .min(1, 'agent id is empty')
  .max(Limits.maxAgentIdChars)
  .regex(/^[A-Za-z0-9._:-]+$/, 'agent id has characters outside [A-Za-z0-9._:-]');
export const TokenSchema = z.number().int().positive();

/**
 * A branch name as `git check-ref-format --branch` would take it, less the rarely used corners: refusing a
 * name here gives a clear message in the settings form instead of a git error at the next claim.
 */
export const BranchNameSchema = z
  .string()
  .min(1, 'branch name is empty')
  .max(200, 'branch name is longer than 200 characters')
  .refine((s) => /^[A-Za-z0-9._\/-]+$/.test(s), 'a branch name uses letters, digits and . _ / - only')
  .refine((s) => !/(^[-/.])|([/.]$)|\.\.|\/\/|@\{|\.lock$|\/\./.test(s), 'not a valid git branch name');
/** A remote's name as git allows it in a clone (`origin`, `upstream`), and nothing a command line could read
 *  as an option. */
export const RemoteNameSchema = z
  .string()
  .min(1, 'remote name is empty')
  .max(100, 'remote name is longer than 100 characters')
  .refine((s) => /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(s), 'a remote name uses letters, digits and . _ - only, and starts with a letter or digit');
/** The board's remote: a URL is printable text without a password (the host strips credentials before it is
 *  written); 2,048 characters is longer than any real remote's URL. */
export const GitRemoteSchema = z
  .object({
    name: RemoteNameSchema,
    url: z
      .string()
      .min(1, 'remote URL is empty')
      .max(2048, 'remote URL is longer than 2,048 characters')
      .refine((s) => !/[\u0000-\u001f\u007f]/.test(s), 'a remote URL has no control characters')
      .refine((s) => !/^[a-z][a-z0-9+.-]*:\/\/[^/@]*:[^/@]*@/i.test(s), 'a remote URL the board keeps holds no password'),
  })
  .strict();
/** A path relative to the repository that stays inside it. */
export const CopyFileSchema = z
  .string()
  .min(1, 'file name is empty')
  .max(1024)
  .refine((s) => !s.startsWith('/') && !/^[A-Za-z]:/.test(s) && !s.split(/[\\/]/).includes('..'), 'name a file inside the repository, like .env');

/** A lease length, the Thread's or a profile's: the same bounds for both. */
const LeaseMsSchema = z
  .number()
  .int()
  .min(Limits.minLeaseMs, `lease must be at least ${Limits.minLeaseMs} ms`)
  .max(Limits.maxLeaseMs, `lease must be at most ${Limits.maxLeaseMs} ms`);

/** A price per million tokens (prices.ts): dollars, none negative, bounded against a slip of digits. */
const PerMillion = z.number().finite().min(0, 'a price is not negative').max(PriceLimits.maxPerMillion, `a price per million tokens is at most $${PriceLimits.maxPerMillion}`);
export const ModelPriceSchema = z.object({ input: PerMillion, output: PerMillion, cacheRead: PerMillion, cacheWrite: PerMillion }).strict();
/** A model's name as the CLIs write it (`claude-sonnet-4-5`, `gpt-5-codex`): a prefix of the names it prices. */
export const ModelNameSchema = z
  .string()
  .min(1, 'a model name is empty')
  .max(PriceLimits.maxModelChars, `a model name is longer than ${PriceLimits.maxModelChars} characters`)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:/@-]*$/, 'a model name uses letters, digits and . _ : / @ - only, like claude-sonnet-4-5');
/** The Thread's own prices: the whole map, replacing the one before (a model left out goes back to the bundled table). */
export const PricesSchema = z
  .record(ModelNameSchema, ModelPriceSchema)
  .refine((m) => Object.keys(m).length <= PriceLimits.maxModels, `at most ${PriceLimits.maxModels} models with prices of their own`);

/** A budget (budgets.ts): dollars or tokens, above nothing and bounded. */
export const BudgetSchema = z.discriminatedUnion('unit', [
  z.object({ unit: z.literal('usd'), limit: z.number().finite().positive('a budget is more than nothing').max(BudgetLimits.maxUsd, `a budget is at most $${BudgetLimits.maxUsd.toLocaleString('en')}`) }).strict(),
  z.object({ unit: z.literal('tokens'), limit: z.number().int('a token budget is a whole number').positive('a budget is more than nothing').max(BudgetLimits.maxTokens, `a budget is at most ${BudgetLimits.maxTokens.toLocaleString('en')} tokens`) }).strict(),
], { error: `a budget's unit is one of ${BUDGET_UNITS.join(', ')}` });

export const SettingsPatchSchema = z
  .object({
    leaseMs: LeaseMsSchema,
    poisonLimit: z.number().int().min(Limits.minPoisonLimit).max(Limits.maxPoisonLimit),
    renewIntervalMs: z.number().int().min(Limits.minRenewIntervalMs).max(Limits.maxLeaseMs),
    verify: VerifySchema,
    /** As many as the files to copy: a handful of config files is what a check reads besides its script. */
    verifyFiles: z.array(CopyFileSchema).max(50, 'at most 50 files verify reads'),
    baseBranch: BranchNameSchema.nullable(),
    remote: GitRemoteSchema.nullable(),
    /** 50 files is far more than the handful of untracked config files a project needs in each worktree. */
    copyFiles: z.array(CopyFileSchema).max(50, 'at most 50 files to copy'),
    waitHoldMs: z
      .number()
      .int()
      .min(Limits.minLeaseMs, `the wait hold must be at least ${Limits.minLeaseMs} ms`)
      .max(Limits.maxWaitHoldMs, `the wait hold must be at most ${Limits.maxWaitHoldMs} ms`),
    notifyAgents: z.boolean(),
    /** A lease per agent profile (issue 34): the whole map, replacing the one before (a profile left out
     *  goes back to the Thread's lease). Only profiles Forkbench launches: an agent's id names one of them. */
    leaseByProfile: z.partialRecord(z.enum(PROFILE_IDS), LeaseMsSchema),
    /** The Thread's default for dispatch to idle agents (dispatch.ts). */
    dispatch: z.boolean(),
    claimLimit: z
      .number()
      .int()
      .min(Limits.minClaimLimit, `the claim limit must be at least ${Limits.minClaimLimit}`)
      .max(Limits.maxClaimLimit, `the claim limit must be at most ${Limits.maxClaimLimit}`),
    /** Profiles whose agents run outside the sandbox (issue 43); each at most once, so no more than there are. */
    uncontained: z
      .array(z.enum(PROFILE_IDS))
      .max(PROFILE_IDS.length)
      .refine((ps) => new Set(ps).size === ps.length, 'each profile at most once'),
    /** Prices per model over the bundled table (issue 47). */
    prices: PricesSchema,
    /** Issue 47 item 5 (src-shared/git/parkedWork.ts): a parked folder's grace, and the parked folders' disk budget. */
    parkedGraceMs: z
      .number()
      .int()
      .min(ParkedWorkDefaults.minGraceMs, `the parked folders' grace must be at least ${ParkedWorkDefaults.minGraceMs} ms`)
      .max(ParkedWorkDefaults.maxGraceMs, `the parked folders' grace must be at most ${ParkedWorkDefaults.maxGraceMs} ms`),
    parkedBudgetMb: z
      .number()
      .int()
      .min(ParkedWorkDefaults.minBudgetMb, `the parked folders' disk budget must be at least ${ParkedWorkDefaults.minBudgetMb} MB`)
      .max(ParkedWorkDefaults.maxBudgetMb, `the parked folders' disk budget must be at most ${ParkedWorkDefaults.maxBudgetMb} MB`)
      .nullable(),
  })
  .partial()
  .strict();
export type SettingsPatch = z.infer<typeof SettingsPatchSchema>;

/** The first problem zod found, phrased for a person. */
export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid input';
  // "title: title is empty" says the field twice: a message that already names its field stands alone.
  // Compared as text, never as a pattern: a field can be a caller's key (a record's), `(` and all.
  const field = String(issue.path.at(-1) ?? '').toLowerCase();
  const message = issue.message.toLowerCase();
  const named = field !== '' && [field, `the ${field}`].some((head) => message.startsWith(head) && !/\w/.test(message.charAt(head.length)));
  const path = issue.path.length && !named ? `${issue.path.join('.')}: ` : '';
  return `${path}${issue.message}`;
}

/** A label an agent carries and a task may name (dispatch.ts): a word a shell and a log line take as is. */
export const LabelSchema = z
  .string()
  .min(1, 'a label is empty')
  .max(DispatchConstants.maxLabelChars, `a label is longer than ${DispatchConstants.maxLabelChars} characters`)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'a label uses letters, digits and . _ - only, like frontend');
export const LabelsSchema = z
  .array(LabelSchema)
  .max(DispatchConstants.maxLabels, `at most ${DispatchConstants.maxLabels} labels`)
  .transform((ls) => [...new Set(ls)]);
/** One entry of who may take a task: a profile's name (`claude`) or `label:` and a label. */
export const TakerSchema = z.string().superRefine((s, ctx) => {
  const ok = s.startsWith(LABEL_PREFIX) ? LabelSchema.safeParse(s.slice(LABEL_PREFIX.length)).success : /^[a-z][a-z0-9]{0,31}$/.test(s);
  if (!ok) ctx.addIssue({ code: 'custom', message: `'${s.slice(0, 60)}' names no profile or label: write a profile like claude, or label:frontend` });
});
export const TakersSchema = z
  .array(TakerSchema)
  .max(DispatchConstants.maxLabels, `a task names at most ${DispatchConstants.maxLabels} profiles or labels`)
  .transform((ts) => [...new Set(ts)]);
/** Who may take a task as the CLI and MCP carry it: `claude,label:frontend` ('' or `any`: anyone), or the list. */
export const TakersTextSchema = z
  .union([z.array(z.string()), z.string().max(DispatchConstants.maxLabels * 48, 'a list of profiles and labels').transform(parseTakersText)])
  .pipe(TakersSchema);
/** An agent's labels as the CLI and MCP carry them: `frontend,gpu` ('' or `none`: none), or the list. */
export const LabelsTextSchema = z
  .union([z.array(z.string()), z.string().max(DispatchConstants.maxLabels * 48, 'a list of labels').transform(parseLabelsText)])
  .pipe(LabelsSchema);
export const DispatchModeSchema = z.enum(DISPATCH_MODES, { message: `dispatch is one of ${DISPATCH_MODES.join(', ')}` });
