#!/bin/sh
# expect.sh CODE TEXT cmd args... : runs the command, passes when it exits with CODE and its
# output (stdout + stderr) contains TEXT (a fixed string; "" matches anything).
code=$1; text=$2; shift 2
out=$("$@" 2>&1); rc=$?
printf '%s\n' "$out"
if [ "$rc" != "$code" ]; then echo "expect.sh: exit code $rc, expected $code"; exit 1; fi
case "$out" in *"$text"*) ;; *) echo "expect.sh: output lacks '$text'"; exit 1;; esac
exit 0
