/**
 * What the real Codex CLI needs around it to run hermetically against the fake Responses API
 * (fakeOpenAiResponses.ts), for a test that runs it through a ThreadHost's pane or through `forkbench serve`'s
 * window: its key and the config a person who has used it before keeps in ~/.codex.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';

export const CODEX_API_KEY = 'sk-forkbench-test-key-0123456789';
export const CODEX_MODEL = 'forkbench-fake-model';

/** The board's tools as Codex 0.171 offers them: the MCP server's tools in the namespace `mcp__<server>`. */
export const codexMcp = (tool: string) => `mcp__forkbench.${tool}`;

/**
 * What Codex fetches for itself whatever its settings: the TUI's announcement from raw.githubusercontent.com
 * on every start. A proxy trap refuses it; anything else in the trap is a call a test did not expect.
 */
export const CODEX_ANNOUNCEMENT = /^CONNECT raw\.githubusercontent\.com:443 /;

/**
 * What a person who has used Codex before has in ~/.codex/config.toml, pointed at the fake API: a model
 * provider of their own with the key from the environment (so no login screen), update checks and
 * analytics off, the project trusted. Off as well: the features that reach the network on start (the
 * plugin catalogue: a git clone from github.com, calls to chatgpt.com) and the background server, which
 * would first copy the whole CLI (~420 MB) into the home. `project` is the folder's real path; `extra` is
 * appended as is.
 */
export function seedCodexHome(codexHome: string, project: string, baseUrl: string, extra = ''): void {
  fs.mkdirSync(codexHome, { recursive: true, mode: 0o700 });
  const config = `model = "${CODEX_MODEL}"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "Fake Responses API"
base_url = "${baseUrl}/v1"
env_key = "OPENAI_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[features]
daemon_auto_start = false
plugins = false
apps = false
remote_plugin = false
plugin_sharing = false
tool_suggest = false

[tui]
show_tooltips = false

[projects.${JSON.stringify(project)}]
trust_level = "trusted"
${extra}`;
  fs.writeFileSync(join(codexHome, 'config.toml'), config, { mode: 0o600 });
}
