#!/bin/bash
s=$(date +%s.%N)
/usr/bin/c++ "$@"; rc=$?
e=$(date +%s.%N)
src=""; o=""; prev=""
for a in "$@"; do case "$a" in *.cpp|*.cc|*.cu|*.h|*.hpp|-) src="$src $a";; esac; [ "$prev" = "-o" ] && o="$a"; prev="$a"; done
h=""
for f in $src; do [ -f "$f" ] && h="$h$(md5sum < "$f" | cut -c1-10)"; done
fl=$(printf '%s ' "$@" | md5sum | cut -c1-8)
echo "${PYTEST_CURRENT_TEST%% (*}|$s|$e|$rc|$h|$fl|$(printf '%s ' "$@" | grep -o -- '-x c++-header\|-E \|-fsyntax-only\|-shared' | head -1)|$src|$o|$PWD" >> /tmp/shim/log.txt
exit $rc
