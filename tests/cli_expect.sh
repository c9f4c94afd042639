#!/usr/bin/env bash
# cli_expect.sh CODE REGEX COMMAND...: runs COMMAND, passes when it exits with
# CODE and its output matches the extended regular expression REGEX.
code=$1; pattern=$2; shift 2
out=$("$@" 2>&1); got=$?
if [ "$got" != "$code" ]; then
  printf 'expected exit status %s, got %s; output:\n%s\n' "$code" "$got" "$out"; exit 1
fi
if ! grep -Eq -- "$pattern" <<<"$out"; then
  printf 'output does not match /%s/:\n%s\n' "$pattern" "$out"; exit 1
fi
echo "ok: exit $got, output matches /$pattern/"
