import { AgentEnv } from '../../src-shared/protocol/agentMethods.js';
import { Exit, refusalLine } from '../../src-shared/protocol/cliWords.js';
import { PERSON_CHECK_METHOD } from '../../src-shared/protocol/hookMethods.js';
import { BRANCH_PREFIX, PERSON_OVERRIDE_ENV } from '../../src-shared/git/taskBranch.js';

/**
 * How both hook programs talk to the board, stated once and written into each: one JSON-RPC line over the
 * board's socket (`ask`), its refusal read back (`refusal`, `unjson`), and a landed move's answer said on
 * stderr when it was not recorded (`said_record`). Perl subs, so where they sit in a script does not matter.
 */
const BOARD_TALK = String.raw`# One JSON-RPC line over the board's socket: the first line of its answer. A board that cannot be asked
# answers undef, or whatever $fail answers for the reason (\&unreachable: git stops there).
sub ask {
  my ($line, $path, $fail) = @_;
  # A board that does not answer (a stopped host) must not hang the commit forever: give up after 10 s.
  my $buf = '';
  my $ok = eval {
    local $SIG{ALRM} = sub { die "timeout\n" };
    alarm 10;
    # Linux's sockaddr_un is spelled out: loading the Socket module costs ~8 ms, more than the whole check.
    my ($family, $stream, $addr);
    if ($^O eq 'linux') {
      ($family, $stream, $addr) = (1, 1, pack('S', 1) . $path . "\0");
    } else {
      require Socket;
      ($family, $stream, $addr) = (Socket::PF_UNIX(), Socket::SOCK_STREAM(), Socket::pack_sockaddr_un($path));
    }
    socket(my $s, $family, $stream, 0) or die "$!\n";
    connect($s, $addr) or die "cannot reach the board at $path: $!\n";
    my $off = 0;
    while ($off < length $line) {
      my $n = syswrite($s, $line, length($line) - $off, $off);
      die "$!\n" unless defined $n;
      $off += $n;
    }
    while (index($buf, "\n") < 0) {
      my $n = sysread($s, $buf, 65536, length $buf);
      die "the board closed the connection\n" unless $n;
    }
    alarm 0;
    close $s;
    1;
  };
  alarm 0;
  unless ($ok) {
    my $why = $@ // '';
    chomp $why;
    $why = 'no answer from the board within 10 s' if $why eq 'timeout';
    return $fail ? $fail->($why) : undef;
  }
  return substr($buf, 0, index($buf, "\n"));
}

# The board's refusal in an answer: (reason, message), or nothing when it answered with a result.
sub refusal {
  my ($answer) = @_;
  return () if $answer =~ /"result"\s*:/ && $answer !~ /"error"\s*:/;
  my ($reason) = $answer =~ /"reason"\s*:\s*"([a-z-]+)"/;
  my ($message) = $answer =~ /"message"\s*:\s*"((?:[^"\\]|\\.)*)"/;
  return ($reason // 'unauthorized', unjson($message // 'the board refused'));
}

sub unjson {
  my ($s) = @_;
  $s =~ s/\\u([0-9a-fA-F]{4})/chr(hex $1)/ge;
  $s =~ s/\\n/\n/g;
  $s =~ s/\\t/\t/g;
  $s =~ s/\\(.)/$1/g;
  return $s;
}

# The board's answer to a landed move's record: a refusal cannot undo what git did, so it is said, and the
# board keeps the move out of the task's work.
sub said_record {
  my ($answer, $task, $sha) = @_;
  my $what = substr($sha, 0, 10);
  if (!defined $answer) {
    print STDERR "forkbench: NOT RECORDED: the board could not be asked, so commit $what is not $task\'s work yet.\n";
    return;
  }
  my ($reason, $message) = refusal($answer);
  print STDERR "forkbench: NOT RECORDED ($reason): $message. Commit $what is not $task\'s work.\n" if defined $reason;
}
`;

/**
 * The hook program every fenced folder runs. Perl, not the `forkbench` CLI: git itself depends on perl
 * (Debian's git package requires it; macOS and Git for Windows ship it), and perl with its socket module
 * starts in ~10 ms where Node takes ~70 ms on the same machine.
 *
 * The hooks are the early, friendly refusal; they are not the fence. The board keeps the record of which
 * commit each task branch is at, under which claim, and approval merges only that (see leaseEngine's
 * recordBranch). So the hooks ask before a move lands (`reference-transaction prepared`, which `--no-verify`
 * does not skip) and report it once it has landed (`committed`), and the board records it only if the claim
 * is still live then. A hook skipped (`core.hooksPath=/dev/null`, plumbing, a hand-written ref file) or
 * delayed past the claim's end only means the move is never recorded.
 *
 * It speaks the agents' socket protocol (one JSON-RPC line, the agent's secret as `auth`) and calls the
 * methods of the shared method table, so the board answers it exactly as it answers the CLI, in the CLI's
 * words and exit codes (src-shared/protocol/cliWords.ts): `forkbench: refused (stale-token): …`.
 *
 * Layout: `perl fence.pl HOOK DIR ARGS…`, where DIR holds `claim` (key=value lines: mode task or thread;
 * for a task folder its task, branch, base, the agent and token it was issued to, and `fenced` with the
 * reason once its claim ended; the board's socket) and `chain` (the repository's own hooks folder for the
 * Thread's folder; for a task folder, its copy of that folder made at its grant).
 */
export function fenceScript(): string {
  return String.raw`#!/usr/bin/env perl
# Forkbench: the fence of a git folder (a task's worktree, or the Thread's own folder). Generated by Forkbench.
use strict;

my ($hook, $dir, @args) = @ARGV;
my %claim = read_kv("$dir/claim");
my $mode = $claim{mode} // 'task';
my $task = $claim{task} // '?';
my $stdin = '';
if ($hook eq 'reference-transaction' || $hook eq 'pre-push') {
  local $/;
  $stdin = <STDIN>;
  $stdin = '' unless defined $stdin;
}
my $phase = $args[0] // '';
my @moves = ();
if ($hook eq 'reference-transaction') {
  for my $line (split /\n/, $stdin) {
    my ($old, $new, $ref) = split / /, $line, 3;
    push @moves, [$old, $new, $ref] if defined $ref && $ref =~ m{^refs/heads/};
  }
}

if ($mode eq 'thread') {
  thread_gate('commit') if $hook eq 'pre-commit';
  thread_gate("update of $moves[0][2]") if $hook eq 'reference-transaction' && $phase eq 'prepared' && @moves;
  thread_gate('push') if $hook eq 'pre-push';
} elsif ($hook eq 'pre-commit') {
  gate('commit');
} elsif ($hook eq 'pre-push') {
  gate('push');
  unless (person()) {
    for my $line (split /\n/, $stdin) {
      my (undef, undef, $remote) = split / /, $line, 4;
      next unless defined $remote;
      refuse('not-holder', "an agent pushes only its task's branch ($claim{branch}), never $remote: approval in the window merges the work into $claim{base}.")
        if $remote ne "refs/heads/$claim{branch}";
    }
  }
} elsif ($hook eq 'reference-transaction' && $phase eq 'prepared') {
  # A folder whose claim ended moves nothing at all, not even its own detached HEAD.
  gate('update of ' . ((split / /, (split /\n/, $stdin)[0] // '', 3)[2] // 'a ref')) if defined $claim{fenced} && $stdin =~ /\S/;
  my $mine;
  for my $m (@moves) {
    my $ref = $m->[2];
    if ($ref eq "refs/heads/$claim{branch}") { $mine = $m; next; }
    if ($ref eq "refs/heads/$claim{base}" || index($ref, 'refs/heads/${BRANCH_PREFIX}') == 0) {
      next if person();
      refuse('not-holder', "$ref is not the branch of $task: an agent moves only $claim{branch}; approval in the window merges it into $claim{base}.");
    }
  }
  gate("update of $claim{branch}", $mine) if $mine;
} elsif ($hook eq 'reference-transaction' && $phase eq 'committed') {
  # The move has landed; the board decides now whether it is the task's work. Git goes on whatever this says.
  for my $m (@moves) { report($m) if $m->[2] eq "refs/heads/$claim{branch}"; }
}
chain();

sub read_kv {
  my ($file) = @_;
  my %kv;
  open(my $fh, '<', $file) or return %kv;
  while (my $l = <$fh>) { chomp $l; $kv{$1} = $2 if $l =~ /^(\w+)=(.*)$/; }
  close $fh;
  return %kv;
}

sub socket_path { return $ENV{${AgentEnv.socket}} || $claim{socket} || ''; }

# A person's word is not taken from the environment alone: an agent can set any variable. The board looks
# at the process that asks (its credentials on the socket, its ancestry in /proc) and says whether it runs
# in an agent's pane. With no board to ask there is no agent to fence.
my $person_said;
sub person {
  return $person_said if defined $person_said;
  return ($person_said = 0) if defined $ENV{${AgentEnv.secret}} && $ENV{${AgentEnv.secret}} ne '';
  return ($person_said = 0) if $mode eq 'task' && ($ENV{${PERSON_OVERRIDE_ENV}} // '') eq '';
  my $sock = $claim{socket} // '';
  return ($person_said = 1) if $sock eq '' || !-S $sock;
  my $answer = ask('{"jsonrpc":"2.0","id":1,"method":"${PERSON_CHECK_METHOD}","params":{}}' . "\n", $sock);
  return ($person_said = 1) unless defined $answer;
  if ($answer =~ /"person"\s*:\s*true/) { return ($person_said = 1); }
  my ($pane) = $answer =~ /"pane"\s*:\s*"((?:[^"\\]|\\.)*)"/;
  print STDERR "forkbench: this git runs inside the agent pane " . unjson($pane // '?') . ", so it is not a person's (${PERSON_OVERRIDE_ENV} does not change that).\n";
  return ($person_said = 0);
}

sub thread_gate {
  my ($what) = @_;
  return if person();
  refuse('not-holder', "agents do not $what in the Thread's own folder: each task has a worktree of its own (forkbench show T-n says where), and approval in the window merges it.");
}

# The token this folder was issued, if it was issued to the agent committing: another agent's commit asks
# the board without one, so the board names that agent's own ended claim (stale-token) in its refusal.
sub my_token {
  my $me = $ENV{${AgentEnv.agentId}} // '';
  return undef unless $me ne '' && ($claim{agent} // '') eq $me && ($claim{token} // '') =~ /^\d+$/;
  return $claim{token};
}

sub refuse {
  my ($reason, $message) = @_;
  print STDERR "${refusalLine('$reason', '$message')}\n";
  exit ${Exit.rejected};
}

sub params {
  my ($m) = @_;
  my $token = my_token();
  my $p = '"taskId":"' . $task . '"' . (defined $token ? ',"token":' . $token : '');
  $p .= ',"ref":"' . $m->[2] . '","from":"' . $m->[0] . '"' . (defined $m->[1] ? ',"to":"' . $m->[1] . '"' : '') if $m;
  return $p;
}

# May this go ahead? A folder whose claim ended refuses on its own; otherwise the board answers.
sub gate {
  my ($what, $move) = @_;
  if (defined $claim{fenced}) {
    # Refused whatever the board says; it is asked so the refusal is in its words and in its log (and a
    # board that cannot be reached still fails closed).
    my $secret = $ENV{${AgentEnv.secret}} // '';
    my $sock = $ENV{${AgentEnv.socket}} // '';
    if ($secret =~ /^[A-Za-z0-9_-]{1,256}$/ && $sock ne '' && $task =~ /^T-\d+$/ && ($claim{token} // '') =~ /^\d+$/) {
      my $answer = ask('{"jsonrpc":"2.0","id":1,"method":"fence","params":{"taskId":"' . $task . '","token":' . $claim{token} . '},"auth":"' . $secret . '"}' . "\n", $sock, \&unreachable);
      check($answer, $what);
    }
    my $me = $ENV{${AgentEnv.agentId}} // '';
    refuse($claim{code} || 'stale-token', "$claim{fenced} (git $what stopped)") if $me ne '' && $me eq ($claim{agent} // '');
    refuse('not-holder', "this folder was the worktree of an ended claim on $task (token $claim{token}); nothing done here becomes the task's work (git $what stopped)");
  }
  if (person()) {
    print STDERR "forkbench: $what in the worktree of $task by a person: not fenced.\n";
    return;
  }
  my $sock = $ENV{${AgentEnv.socket}} // '';
  my $secret = $ENV{${AgentEnv.secret}} // '';
  if ($sock eq '' || $secret eq '') {
    refuse('not-holder', "the worktree of $task is fenced by the Forkbench board, and this $what does not come from an agent pane. "
      . "A person working here by hand: ${PERSON_OVERRIDE_ENV}=1 git ...");
  }
  unreachable("the agent secret or the claim file of this worktree is malformed") unless $secret =~ /^[A-Za-z0-9_-]{1,256}$/ && $task =~ /^T-\d+$/;
  # A commit by the agent this folder was issued to is asked about once, when its ref update is prepared:
  # that check sees the move itself. Anyone else's commit is asked about now, for the board's own words.
  return if !$move && $what eq 'commit' && defined my_token();
  my $answer = ask('{"jsonrpc":"2.0","id":1,"method":"fence","params":{' . params($move) . '},"auth":"' . $secret . '"}' . "\n", $sock, \&unreachable);
  check($answer, $what);
}

sub check {
  my ($answer, $what) = @_;
  my ($reason, $message) = refusal($answer);
  refuse($reason, "$message (git $what stopped)") if defined $reason;
}

# After the move landed: ask the board to record it. A refusal cannot undo what git did; it is said, and the
# board keeps the move out of the task's work (and moves it aside).
sub report {
  my ($m) = @_;
  my $secret = $ENV{${AgentEnv.secret}} // '';
  my $sock = socket_path();
  return if $sock eq '';
  my $auth = $secret =~ /^[A-Za-z0-9_-]{1,256}$/ ? ',"auth":"' . $secret . '"' : '';
  my $answer = ask('{"jsonrpc":"2.0","id":1,"method":"record","params":{' . params($m) . '}' . $auth . "}\n", $sock);
  said_record($answer, $task, $m->[1]);
}

${BOARD_TALK}
sub unreachable {
  my ($why) = @_;
  print STDERR "forkbench: cannot confirm your claim on $task ($why), so git stops here: the fence fails closed.\n";
  exit ${Exit.unreachable};
}

# The repository's own hook of the same name still runs (husky, lint-staged, a team's checks).
sub chain {
  my $to = '';
  if (open(my $fh, '<', "$dir/chain")) { $to = <$fh> // ''; chomp $to; close $fh; }
  exit 0 if $to eq '';
  my $next = "$to/$hook";
  exit 0 unless -f $next && -x $next;
  if ($hook eq 'reference-transaction' || $hook eq 'pre-push') {
    open(my $p, '|-', $next, @args) or exit 1;
    print $p $stdin;
    close $p;
    exit($? >> 8);
  }
  exec($next, @args) or exit 1;
}
`;
}

/**
 * The report of a landed move (`reference-transaction committed`), on its own: it runs for every commit, and
 * compiling the whole hook program for it cost ~5 ms of the fence's per-commit budget. Same protocol and
 * words as `report` above: the board records the move or says why not; git has already gone on.
 */
export function reportScript(): string {
  return String.raw`#!/usr/bin/env perl
# Forkbench: report a landed move of a task branch to the board. Generated by Forkbench.
my ($dir) = @ARGV;
my %c;
if (open(my $fh, '<', "$dir/claim")) { while (<$fh>) { chomp; $c{$1} = $2 if /^(\w+)=(.*)$/; } close $fh; }
my $in = do { local $/; <STDIN> } // '';
my $sock = $ENV{${AgentEnv.socket}} || $c{socket} || '';
exit 0 if $sock eq '';
my $secret = $ENV{${AgentEnv.secret}} // '';
my $me = $ENV{${AgentEnv.agentId}} // '';
my $tok = (!defined $c{fenced} && $me ne '' && $me eq ($c{agent} // '') && ($c{token} // '') =~ /^\d+$/) ? ',"token":' . $c{token} : '';
my $auth = $secret =~ /^[A-Za-z0-9_-]{1,256}$/ ? ',"auth":"' . $secret . '"' : '';
for my $line (split /\n/, $in) {
  my ($old, $new, $ref) = split / /, $line, 3;
  next unless defined $ref && $ref eq "refs/heads/$c{branch}";
  my $req = '{"jsonrpc":"2.0","id":1,"method":"record","params":{"taskId":"' . $c{task} . '"' . $tok . ',"ref":"' . $ref . '","from":"' . $old . '","to":"' . $new . '"}' . $auth . "}\n";
  said_record(ask($req, $sock), $c{task}, $new);
}
exit 0;

${BOARD_TALK}`;
}
