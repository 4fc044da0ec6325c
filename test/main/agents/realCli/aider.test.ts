/**
 * The real Aider through its profile, where it is installed: Aider is the Python package aider-chat from
 * PyPI, so npm cannot bring it, and this machine reaches no PyPI (the suite skips here, saying so).
 *
 * Aider speaks no MCP: its profile hands it the board instructions as a read-only file (`--read`), and it
 * reaches the board through the shell commands it suggests. The scripted model (OpenAI chat completions on
 * 127.0.0.1) answers the first message with `forkbench claim T-1` in a shell block; the person confirms the
 * command, as they would, and the claim reaches the board as the agent's own.
 */
import { expect, it } from 'vitest';
import { type ChatRequest, messageText, openAiChat } from '../../../helpers/realCli/fakeOpenAiChat.js';
import { closedAfterEach, describeRealCli, openRealCliThread, startFakeModelServer } from '../../../helpers/realCli/harness.js';

const MODEL = 'fake-model';
const REPLY = 'I will claim the task first.\n\n```bash\nforkbench claim T-1\n```\n';

/** No update check, analytics, release notes, git repository or unknown-model warnings: each is a question
 *  or a call home at start, which a person who uses Aider has answered or turned off once. */
const QUIET_ENV = {
  AIDER_CHECK_UPDATE: 'false',
  AIDER_ANALYTICS_DISABLE: 'true',
  AIDER_SHOW_RELEASE_NOTES: 'false',
  AIDER_GIT: 'false',
  AIDER_SHOW_MODEL_WARNINGS: 'false',
};

describeRealCli('aider', 'Aider (real CLI, from PyPI) on the board', () => {
  const open = closedAfterEach();

  it('gets the board instructions as a read-only file and claims through a shell command it suggests', async () => {
    const api = open(await startFakeModelServer(openAiChat(() => ({ text: REPLY }))));
    const t = open(
      await openRealCliThread('aider', {
        ...QUIET_ENV,
        OPENAI_API_BASE: `${api.url}/v1`,
        OPENAI_API_KEY: 'fake-key',
        AIDER_MODEL: `openai/${MODEL}`,
      }),
    );
    const { agent, screen, step } = await t.launch('aider', { diagnose: () => api.requests.map((r) => `${r.method} ${r.path}`).join('\n') });
    await step(screen.until(() => /^>\s*$/m.test(screen.visible()), 60_000, "Aider's prompt"));
    await step(screen.type('Take task T-1 from the board.'));

    // Aider asks before it runs a suggested command: the person says yes.
    await step(screen.until(() => /Run shell command\?/i.test(screen.visible()), 30_000, 'the question to run `forkbench claim T-1`'));
    t.host.roster.relay.input(agent.id, 'y\r');
    const grant = await step(t.event((e) => e.kind === 'grant' && e.agentId === agent.id && e.taskId === 'T-1', 30_000, 'the claim of T-1'));
    expect(grant).toMatchObject({ by: agent.id });

    // The instructions rode along as the read-only file, in the messages the model got.
    const first = api.requests.map((r) => r.body as ChatRequest).find((b) => b?.messages?.length)!;
    expect(first.messages.map(messageText).join('\n')).toContain(`You are agent "${agent.id}"`);
    expect(t.trap.attempts).toEqual([]);
  }, 120_000);
});
