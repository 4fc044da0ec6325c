import { useState } from 'react';
import { Limits } from '../../src-shared/board/limits.js';
import { useApp, useController } from '../state/hooks.js';

const seconds = (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`);

/**
 * The Thread's lease length and verify command. Shown as one line; a click opens a small form. The host
 * validates the bounds (the same schema as every other caller) and a refusal shows in the error banner.
 */
export function ThreadSettings() {
  const c = useController();
  const leaseMs = useApp((s) => s.leaseMs);
  const verify = useApp((s) => (s.boardVersion, s.board?.settings.verify ?? null));
  const [open, setOpen] = useState(false);
  const [lease, setLease] = useState('');
  const [cmd, setCmd] = useState('');

  const start = () => {
    setLease(String(Math.round(leaseMs / 1000)));
    setCmd(verify ?? '');
    setOpen(true);
  };
  const save = async () => {
    const s = Number(lease);
    if (!Number.isFinite(s)) return;
    const ok = await c.setSettings({ leaseMs: Math.round(s * 1000), verify: cmd.trim() ? cmd.trim() : null });
    if (ok) setOpen(false);
  };

  if (!open) {
    return (
      <button type="button" className="thread-settings link" data-testid="thread-settings" onClick={start} title="Change the lease and the verify command">
        lease {seconds(leaseMs)} · verify: {verify ? <code>{verify}</code> : 'none (done waits for review)'}
      </button>
    );
  }
  return (
    <form
      className="thread-settings editing"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <label>
        Lease (s)
        <input
          data-testid="settings-lease"
          type="number"
          min={Limits.minLeaseMs / 1000}
          max={Limits.maxLeaseMs / 1000}
          value={lease}
          onChange={(e) => setLease(e.target.value)}
        />
      </label>
      <label className="grow">
        Verify command
        <input data-testid="settings-verify" placeholder="e.g. npm test (empty: a person reviews)" value={cmd} onChange={(e) => setCmd(e.target.value)} />
      </label>
      <button type="submit" data-testid="settings-save">
        Save
      </button>
      <button type="button" onClick={() => setOpen(false)}>
        Cancel
      </button>
    </form>
  );
}
