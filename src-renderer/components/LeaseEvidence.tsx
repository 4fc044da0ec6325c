import { gapHistogram, leaseFor, suggestLease, type GapBucket, type ProfileEvidence } from '../../src-shared/board/leaseEvidence.js';
import type { ThreadSettings } from '../../src-shared/board/model.js';
import { PROFILE_IDS, type ProfileIdShared } from '../../src-shared/agents/profileIds.js';
import { useApp, useController } from '../state/hooks.js';
import '../styles/leaseEvidence.css';

const secs = (ms: number) => `${Math.round(ms / 1000)} s`;
const bucketName = (b: GapBucket) => (b.toMs === null ? `${secs(b.fromMs)}+` : b.fromMs === 0 ? `<${secs(b.toMs)}` : `${Math.round(b.fromMs / 1000)}–${secs(b.toMs)}`);
const isProfile = (p: string): p is ProfileIdShared => (PROFILE_IDS as readonly string[]).includes(p);

/**
 * What each agent profile's claims say about the lease (issue 34, item 5): a small histogram of the longest
 * quiet gaps of its claims that ended well, its lapses and live claims reclaimed, and the lease the evidence
 * suggests, with a button that sets it for the profile. Only that button (a person) changes a lease.
 */
export function LeaseEvidence() {
  const c = useController();
  const settings = useApp((s) => (s.boardVersion, s.board?.settings ?? null));
  const evidence = useApp((s) => (s.boardVersion, s.board?.evidence ?? null));
  const profiles = useApp((s) => s.profiles);
  if (!settings || !evidence) return null;
  const label = (p: string) => profiles.find((x) => x.id === p)?.label ?? p;
  const shown = Object.keys({ ...evidence.profiles, ...settings.leaseByProfile }).filter(isProfile).sort((a, b) => PROFILE_IDS.indexOf(a) - PROFILE_IDS.indexOf(b));
  const setLease = (profile: ProfileIdShared, ms: number | null) => {
    const next: Record<string, number> = { ...settings.leaseByProfile };
    if (ms === null) delete next[profile];
    else next[profile] = ms;
    void c.actions.setSettings({ leaseByProfile: next });
  };
  return (
    <section className="lease-evidence" data-testid="lease-evidence" aria-label="Lease evidence per agent profile">
      <h3>Lease per agent profile</h3>
      {shown.length === 0 ? (
        <p className="muted" data-testid="lease-evidence-empty">
          No evidence yet: once agents' claims end (approved, lapsed), each profile's quiet gaps show here with a suggested lease.
        </p>
      ) : (
        shown.map((p) => <ProfileRow key={p} profile={p} label={label(p)} ev={evidence.profiles[p]} settings={settings} setLease={setLease} />)
      )}
    </section>
  );
}

function ProfileRow(props: { profile: ProfileIdShared; label: string; ev: ProfileEvidence | undefined; settings: ThreadSettings; setLease: (p: ProfileIdShared, ms: number | null) => void }) {
  const { profile, label, ev, settings } = props;
  // Any id of the profile reads its lease: leaseFor takes the profile from the agent's id.
  const current = leaseFor(settings, `${profile}-1-000000000000`);
  const own = Object.hasOwn(settings.leaseByProfile, profile);
  const buckets = gapHistogram(ev?.gaps ?? []);
  const most = Math.max(1, ...buckets.map((b) => b.count));
  const suggestion = suggestLease(profile, label, ev, current);
  return (
    <div className="lease-profile" data-testid={`evidence-${profile}`}>
      <div className="lease-profile-head">
        <strong>{label}</strong> · lease {secs(current)} {own ? '(set for this profile)' : "(the Thread's)"}
        {own && (
          <button type="button" className="link" data-testid={`evidence-default-${profile}`} onClick={() => props.setLease(profile, null)}>
            use the Thread's
          </button>
        )}
      </div>
      <ul className="gap-histogram" aria-label={`Longest quiet gap of ${label}'s claims that ended well`}>
        {buckets.map((b, i) => (
          <li key={i} data-testid={`evidence-bucket-${profile}-${i}`} data-count={b.count} title={`${b.count} claim${b.count === 1 ? '' : 's'} quiet for at most ${bucketName(b)}`}>
            <span className="bar" aria-hidden="true" style={{ height: `${Math.round((b.count / most) * 100)}%` }} />
            <span className="count">{b.count}</span>
            <span className="bucket">{bucketName(b)}</span>
          </li>
        ))}
      </ul>
      <div className="lease-counts">
        <span data-testid={`evidence-lapses-${profile}`}>lapses {ev?.lapses.length ?? 0}</span> ·{' '}
        <span data-testid={`evidence-reclaimed-${profile}`}>live claims reclaimed {ev?.reclaimed.length ?? 0}</span>
      </div>
      {suggestion && (
        <div className="lease-suggestion">
          <span data-testid={`evidence-suggestion-${profile}`}>{suggestion.text}</span>
          {suggestion.suggestedMs !== current && (
            <button type="button" data-testid={`evidence-use-${profile}`} onClick={() => props.setLease(profile, suggestion.suggestedMs)}>
              use {secs(suggestion.suggestedMs)}
            </button>
          )}
        </div>
      )}
    </div>
  );
}
