import { profileLeaseViews, type GapBucket, type ProfileLeaseView } from '../../src-shared/board/leaseEvidence.js';
import { PROFILE_IDS, type ProfileIdShared } from '../../src-shared/agents/profileIds.js';
import { useApp, useController } from '../state/hooks.js';
import '../styles/leaseEvidence.css';

const secs = (ms: number) => `${Math.round(ms / 1000)} s`;
const bucketName = (b: GapBucket) => (b.toMs === null ? `${secs(b.fromMs)}+` : b.fromMs === 0 ? `<${secs(b.toMs)}` : `${Math.round(b.fromMs / 1000)}–${secs(b.toMs)}`);
const isProfile = (p: string): p is ProfileIdShared => (PROFILE_IDS as readonly string[]).includes(p);

/**
 * What each agent profile's claims say about the lease (issue 34, item 5): a small histogram of the longest
 * quiet gaps of its claims that ended well, its lapses and live claims reclaimed, and the lease the evidence
 * suggests, with a button that sets it for the profile. Only that button (a person) changes a lease. The
 * same views `forkbench leases` prints (profileLeaseViews).
 */
export function LeaseEvidence() {
  const c = useController();
  const settings = useApp((s) => (s.boardVersion, s.board?.settings ?? null));
  const evidence = useApp((s) => (s.boardVersion, s.board?.evidence ?? null));
  const profiles = useApp((s) => s.profiles);
  if (!settings || !evidence) return null;
  const label = (p: string) => profiles.find((x) => x.id === p)?.label ?? p;
  // Only profiles a lease can be set for (the settings' schema takes no other).
  const views = profileLeaseViews(settings, evidence, label, PROFILE_IDS).filter((v) => isProfile(v.profile));
  const setLease = (profile: string, ms: number | null) => {
    const next: Record<string, number> = { ...settings.leaseByProfile };
    if (ms === null) delete next[profile];
    else next[profile] = ms;
    void c.actions.setSettings({ leaseByProfile: next });
  };
  return (
    <section className="lease-evidence" data-testid="lease-evidence" aria-label="Lease evidence per agent profile">
      <h3>Lease per agent profile</h3>
      {views.length === 0 ? (
        <p className="muted" data-testid="lease-evidence-empty">
          No evidence yet: once agents' claims end (approved, lapsed), each profile's quiet gaps show here with a suggested lease.
        </p>
      ) : (
        views.map((v) => <ProfileRow key={v.profile} v={v} setLease={setLease} />)
      )}
    </section>
  );
}

function ProfileRow({ v, setLease }: { v: ProfileLeaseView; setLease: (profile: string, ms: number | null) => void }) {
  const most = Math.max(1, ...v.gaps.map((b) => b.count));
  const s = v.suggestion;
  return (
    <div className="lease-profile" data-testid={`evidence-${v.profile}`}>
      <div className="lease-profile-head">
        <strong>{v.label}</strong> · lease {secs(v.leaseMs)} {v.own ? '(set for this profile)' : "(the Thread's)"}
        {v.own && (
          <button type="button" className="link" data-testid={`evidence-default-${v.profile}`} onClick={() => setLease(v.profile, null)}>
            use the Thread's
          </button>
        )}
      </div>
      <ul className="gap-histogram" aria-label={`Longest quiet gap of ${v.label}'s claims that ended well`}>
        {v.gaps.map((b, i) => (
          <li key={i} data-testid={`evidence-bucket-${v.profile}-${i}`} data-count={b.count} title={`${b.count} claim${b.count === 1 ? '' : 's'} quiet for at most ${bucketName(b)}`}>
            <span className="bar" aria-hidden="true" style={{ height: `${Math.round((b.count / most) * 100)}%` }} />
            <span className="count">{b.count}</span>
            <span className="bucket">{bucketName(b)}</span>
          </li>
        ))}
      </ul>
      <div className="lease-counts">
        <span data-testid={`evidence-lapses-${v.profile}`}>lapses {v.lapses}</span> ·{' '}
        <span data-testid={`evidence-reclaimed-${v.profile}`}>live claims reclaimed {v.reclaimed}</span>
      </div>
      {s && (
        <div className="lease-suggestion">
          <span data-testid={`evidence-suggestion-${v.profile}`}>{s.text}</span>
          {s.suggestedMs !== v.leaseMs && (
            <button type="button" data-testid={`evidence-use-${v.profile}`} onClick={() => setLease(v.profile, s.suggestedMs)}>
              use {secs(s.suggestedMs)}
            </button>
          )}
        </div>
      )}
    </div>
  );
}
