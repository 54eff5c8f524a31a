# The shell session of `agentbox mcp` (docs/protocol.md, "The shell session").
# Compiled into runtime/mcp/mcp-shell.c as a string (full-line comments and blank
# lines dropped) and run inside the sandbox as
#
#   bash --noprofile --norc -c SCRIPT bash call R W COMMAND
#   bash --noprofile --norc -c SCRIPT bash background R LOG COMMAND
#
# R is the state slot to load ("" for none), W the slot to write, LOG the
# background command's log file.  fd 3 is the server's status pipe: "r" NUL
# when the state was loaded, "s" CWD NUL when it was saved.
#
# Every name of ours starts with __ab_ and is never saved.  Everything that
# runs once the state is loaded is a builtin called through `builtin`, in
# functions defined before it (a function body is parsed once: no alias of
# the session applies to it).  Until then no function of the session exists,
# so a bare `exec` is the builtin, whose redirections stay.
__ab_mode=$1 __ab_r=$2 __ab_w=$3 __ab_cmd=$4 __ab_opts='' __ab_state='' __ab_restored=''
if [[ $__ab_mode == background ]]; then
  exec </dev/null >>"$__ab_w" 2>&1 || builtin exit 126
else
  # out of the way of the command line, which gets it closed
  exec {__ab_fd}>&3 3>&-
fi

# Write the state to slot $__ab_w: bash source that the next call evals.
# The options go into __ab_opts, run right before the next command line
# (xtrace last, so that nothing of ours is traced), not while loading.
__ab_save () {
  builtin trap - EXIT
  builtin local __ab_o __ab_n __ab_l
  __ab_o=$(builtin shopt -p; builtin umask -p; builtin trap -p; builtin alias -p)
  for __ab_n in allexport braceexpand errexit errtrace functrace hashall keyword noclobber noglob nolog \
      notify nounset physical pipefail posix xtrace; do
    case :$SHELLOPTS: in
      *:$__ab_n:*) __ab_o+=$'\nset -o '$__ab_n ;;
      *) __ab_o+=$'\nset +o '$__ab_n ;;
    esac
  done
  builtin set +eu
  builtin umask 077
  {
    builtin printf 'builtin cd -- %q 2>/dev/null\n' "$PWD"
    # names one per line, split without IFS (the session may have changed it)
    __ab_l=$(builtin compgen -v)$'\n'
    while [[ $__ab_l ]]; do
      __ab_n=${__ab_l%%$'\n'*} __ab_l=${__ab_l#*$'\n'}
      case $__ab_n in
        __ab_*|BASH*|EPOCH*|DIRSTACK|EUID|FUNCNAME|GROUPS|HISTCMD|LINENO|PIPESTATUS|PPID|PWD|RANDOM|\
        SECONDS|SHELLOPTS|SHLVL|SRANDOM|UID|_|'') ;;
        *) builtin declare -p -- "$__ab_n" 2>/dev/null ;;
      esac
    done
    __ab_l=$(builtin compgen -A function)$'\n'
    while [[ $__ab_l ]]; do
      __ab_n=${__ab_l%%$'\n'*} __ab_l=${__ab_l#*$'\n'}
      case $__ab_n in
        __ab_*|'') ;;
        *) builtin declare -f -- "$__ab_n" ;;
      esac
    done
    builtin declare -Fx
    builtin printf '__ab_opts=%q\n' "$__ab_o"
  } >| /run/.agentbox-shell."$__ab_w"
}

# The end of a call, after the command line or from the EXIT trap when it
# ends the shell first (exit, errexit, a SIGTERM it does not trap).  Run
# with stderr on /dev/null: xtrace shows none of it.
__ab_exit () {
  __ab_st=$?
  __ab_save && builtin printf 's%s\0' "$PWD" >&"$__ab_fd"
  builtin exit "$__ab_st"
}

if [[ -n $__ab_r && -r /run/.agentbox-shell.$__ab_r ]]; then
  __ab_state=$(< /run/.agentbox-shell."$__ab_r")
fi
if [[ $__ab_mode == background ]]; then
  # read: the session's next call may write the slot from now on
  exec 3>&-
fi
if [[ -n $__ab_state ]]; then
  # the session's environment, not the one agentbox exec gave: what the
  # session unset stays unset
  for __ab_n in $(builtin compgen -e); do builtin unset -v "$__ab_n"; done 2>/dev/null
  builtin eval "$__ab_state" && __ab_restored=1
fi
builtin set --
if [[ $__ab_mode == background ]]; then
  # The pid the record gives is this shell's: `kill PID` must stop the job,
  # not leave what it started running.  The job runs in a subshell (traps
  # reset: TERM kills it) and this shell, waiting in `wait`, passes a
  # TERM, INT or HUP on as TERM to its process group -- the one agentbox
  # exec's worker made for this background command alone -- and dies of it.
  builtin trap 'builtin trap - TERM INT HUP; builtin kill -TERM 0' TERM INT HUP
  builtin eval "$__ab_opts"$'\n'"$__ab_cmd" &
  builtin wait "$!"
  builtin exit
fi
# One group, parsed whole before the command line runs: none of it is read
# after the session's aliases are on.
{
  [[ -n $__ab_restored ]] && builtin printf 'r\0' >&"$__ab_fd"
  builtin trap '{ __ab_exit; } 2>/dev/null' EXIT
  builtin eval "$__ab_opts"$'\n'"$__ab_cmd" {__ab_fd}>&-
  { __ab_exit; } 2>/dev/null
}
