# stack.sh is sourced by the scripts that run programs against the local
# stack (scripts/stack.sh), so that each starts and stops it alike:
# stack_up brings the stack up, or takes the one already running, and puts
# its export lines in the environment. The script adds the processes it
# starts to pids; on exit they are stopped, and the stack too when this
# script started it, never one that was already running for someone else.
# A script that leaves everything running clears the EXIT trap itself.

pids=()
started_stack=false

# stack_cleanup stops the processes in pids, then the stack if stack_up
# started it.
stack_cleanup() {
  trap - INT TERM EXIT
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if $started_stack; then scripts/stack.sh down; fi
}

# stack_up starts the stack unless it runs, and exports its variables.
# It runs from the repository's root, as the scripts do after their cd.
stack_up() {
  trap stack_cleanup EXIT
  trap 'exit 130' INT TERM
  scripts/stack.sh status >/dev/null 2>&1 || started_stack=true
  local stack_env
  # Assigned first: a failing stack.sh must stop here, and eval of a
  # failed command substitution would not.
  stack_env=$(scripts/stack.sh up)
  eval "$stack_env"
}
