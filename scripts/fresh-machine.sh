#!/usr/bin/env bash
# What a new contributor's machine is like, made on this one, then the README's two commands.
#
#   - a fresh clone of this repository's HEAD (committed work only);
#   - no Chromium or Chrome on the machine: the system's are hidden in a mount namespace of this script's
#     own (unshare, as root), so only what `npm install` brings can serve the browser tests;
#   - a fresh home folder whose start-up files are slow (2 s) and reset PATH, as many developers' do;
#   - then, in that person's login shell: `npm install && npm test`, each timed;
#   - and afterwards the home folder must be exactly as it was (names, sizes, times).
#
# npm's cache goes outside the home (npm_config_cache) so the check covers `npm install` too; the
# machine's own npm settings (~/.npmrc: where Node's headers are) are copied in, as a machine's image has
# them.
#
# Usage: scripts/fresh-machine.sh [--keep] [--bubblewrap] [--load N]
#   --keep         leaves the work folder for a look;
#   --bubblewrap   apt-installs bubblewrap first (Flatpak brings it to many desktops, .ci/run to CI): Codex CLI
#                  then sandboxes its shell through bwrap;
#   --load N       keeps N busy loops running (one a core keeps them all busy) for the whole `npm test`, as a
#                  machine doing other work is; they end with it, on any exit of this script, and on their own
#                  if it is killed. Each option says what it did in the output.
set -euo pipefail
if [ "${FORKBENCH_FRESH_INSIDE:-}" != 1 ]; then
  [ "$(id -u)" = 0 ] || { echo "fresh-machine: needs root (a mount namespace hides the system's Chromium)" >&2; exit 2; }
  FORKBENCH_FRESH_INSIDE=1 exec unshare --mount --propagation private "$0" "$@"
fi
# fd 3 is the terminal's output: what is said on an exit during `npm test` is not lost in its log.
exec 3>&1
say() { printf 'fresh-machine: %s\n' "$*" >&3; }
keep=
bubblewrap=
load=0
while (($#)); do
  case $1 in
    --keep) keep=1 ;;
    --bubblewrap) bubblewrap=1 ;;
    --load)
      [[ ${2:-} =~ ^[0-9]+$ ]] || { echo "fresh-machine: --load takes a number of busy loops" >&2; exit 2; }
      load=$2
      shift
      ;;
    *) echo "fresh-machine: unknown option $1 (the usage is in the script's header)" >&2; exit 2 ;;
  esac
  shift
done
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
work=$(mktemp -d /tmp/forkbench-fresh-XXXXXX)
home="$work/home"

# The busy loops of --load, ended on any exit; each also ends on its own once this script is gone (kill -9).
loops=()
stop_load() {
  ((${#loops[@]})) || return 0
  kill "${loops[@]}" 2>/dev/null || true
  wait "${loops[@]}" 2>/dev/null || true
  say "load: stopped the ${#loops[@]} busy loops"
  loops=()
}
trap stop_load EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ -n "$bubblewrap" ]; then
  if command -v bwrap >/dev/null; then
    say "bubblewrap: already installed ($(command -v bwrap))"
  else
    apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null
    say "bubblewrap: installed with apt ($(command -v bwrap))"
  fi
fi

hidden=()
for p in /usr/bin/chromium /usr/bin/chromium-browser /usr/bin/google-chrome /usr/bin/google-chrome-stable /snap/bin/chromium /usr/lib/chromium /opt/google/chrome; do
  [ -e "$p" ] || continue
  if [ -d "$p" ]; then mount -t tmpfs tmpfs "$p"; else mount --bind /dev/null "$p"; fi
  hidden+=("$p")
done
say "system browsers hidden: ${hidden[*]:-(none installed)}"
# A Chromium an earlier run unpacked from npm would be found again: this run unpacks its own.
export TMPDIR="$work/tmp"
mkdir -p "$TMPDIR"

mkdir -p "$home"
for f in .profile .bashrc .bash_profile; do
  cat > "$home/$f" <<'RC'
# A slow start-up file that sets PATH from scratch.
sleep 2
PATH=/usr/local/bin:/usr/bin:/bin
export PATH
RC
done
[ -f "$HOME/.npmrc" ] && cp "$HOME/.npmrc" "$home/.npmrc"
snapshot() { (cd "$home" && find . -printf '%p %y %s %T@\n' | sort); }
snapshot > "$work/home.before"

say "cloning $(git -C "$repo" rev-parse --short HEAD) into $work/forkbench"
git clone -q "$repo" "$work/forkbench"

run() {
  env -i HOME="$home" USER="${USER:-root}" LOGNAME="${LOGNAME:-root}" SHELL=/bin/bash TERM=xterm-256color LANG=C.UTF-8 \
    TMPDIR="$TMPDIR" npm_config_cache="$work/npm-cache" PATH=/usr/local/bin:/usr/bin:/bin \
    bash -lc "cd '$work/forkbench' && $1"
}
status=0
start=$(date +%s)
if run 'npm install --no-audit --no-fund' > "$work/install.log" 2>&1; then
  say "npm install: ok in $(($(date +%s) - start)) s"
else
  status=$?; say "npm install FAILED ($status); the end of $work/install.log:"; tail -30 "$work/install.log"
fi
if [ "$status" = 0 ]; then
  for ((i = 0; i < load; i++)); do
    (while kill -0 "$$" 2>/dev/null; do :; done) &
    loops+=($!)
  done
  ((load == 0)) || say "load: ${load} busy loops running for npm test (pids ${loops[*]})"
  start=$(date +%s)
  if run 'npm test' > "$work/test.log" 2>&1; then
    say "npm test: ok in $(($(date +%s) - start)) s; $(grep -a '^Tests:' "$work/test.log" | tail -1)"
  else
    status=$?; say "npm test FAILED ($status) in $(($(date +%s) - start)) s; $(grep -a '^Tests:' "$work/test.log" | tail -1)"
    grep -a -E 'FAIL|counted as failed' "$work/test.log" | head -40
  fi
  stop_load
  grep -a 'browser: ' "$work/test.log" | head -1 || true
fi

snapshot > "$work/home.after"
if diff -u "$work/home.before" "$work/home.after" > "$work/home.diff"; then
  say "home folder unchanged ($(wc -l < "$work/home.before") entries)"
else
  status=${status/#0/1}; say "the home folder CHANGED:"; head -40 "$work/home.diff"
fi
if [ -n "$keep" ]; then say "kept $work"; else rm -rf "$work"; fi
exit "$status"
