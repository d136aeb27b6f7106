#!/usr/bin/env bash
# How long `perfscope top` takes to quit: start it system-wide in a detached 80×24 tmux,
# wait for samples on screen, press q and time until the shell prints the exit status.
# Usage: scripts/measure-top-quit.sh [BINARY] [RUNS]   (root: perf_event system-wide)
#        TOP_ARGS='-e sched:sched_switch' scripts/measure-top-quit.sh   (a tracing top)
set -euo pipefail
bin=${1:-target/debug/perfscope}
runs=${2:-5}
bin=$(realpath "$bin")
session=perfscope-quit-$$
trap 'tmux kill-session -t $session 2>/dev/null || true' EXIT
for run in $(seq "$runs"); do
  tmux kill-session -t "$session" 2>/dev/null || true
  tmux new-session -d -s "$session" -x 80 -y 24 "$bin top ${TOP_ARGS:-} 2>/dev/null; echo perfscope-exit=\$?; sleep 30"
  for _ in $(seq 200); do
    tmux capture-pane -p -t "$session" | grep -Eq 'samples|events' && break
    sleep 0.05
  done
  sleep 1
  start=$(date +%s.%N)
  tmux send-keys -t "$session" q
  until tmux capture-pane -p -t "$session" | grep -q perfscope-exit=; do sleep 0.01; done
  end=$(date +%s.%N)
  printf 'run %d: quit took %.3f s\n' "$run" "$(echo "$end - $start" | bc -l)"
done
