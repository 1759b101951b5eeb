#!/usr/bin/env bash
# Writes the default job's corpus, data/corpus/kjv.txt: the King James Bible from Debian's bible-kjv
# package (installed when missing), one verse per line without its reference, chapters separated by
# a blank line (so `zerotrain data prepare --split-on-blank-lines` makes one document per chapter).
# Idempotent: an existing, complete kjv.txt is kept; the file is written to a temporary name first.
# Usage: scripts/get_corpus.sh [OUT_DIR]   (default: data/corpus under the repository root)
set -euo pipefail
cd "$(dirname "$0")/.."
out_dir="${1:-data/corpus}"
out="$out_dir/kjv.txt"
expected_verses=31102

count_verses() { grep -c . "$1" 2>/dev/null || echo 0; }

if [ -s "$out" ] && [ "$(count_verses "$out")" -eq "$expected_verses" ]; then
  echo "[corpus] $out is present ($expected_verses verses)"
  exit 0
fi

if ! command -v bible >/dev/null 2>&1; then
  echo "[corpus] installing Debian package bible-kjv"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends bible-kjv
fi

mkdir -p "$out_dir"
tmp="$(mktemp "$out_dir/.kjv.txt.XXXXXX")"
trap 'rm -f "$tmp"' EXIT
# `bible -f` turns pretty-printing off: one line per verse, "Book1:1 text". The range covers the
# whole text; standard input is closed so the program does not wait for interactive commands.
bible -f 'Gen1:1-Rev22:21' </dev/null |
  awk '
    match($0, /^[1-3]?[A-Za-z]+[0-9]+:[0-9]+ /) {
      ref = substr($0, 1, RLENGTH - 1)
      chapter = ref; sub(/:[0-9]+$/, "", chapter)
      if (NR > 1 && chapter != last) print ""
      last = chapter
      print substr($0, RLENGTH + 1)
      next
    }
    { print "[corpus] unexpected line " NR ": " $0 > "/dev/stderr"; exit 1 }
  ' >"$tmp"

verses="$(count_verses "$tmp")"
if [ "$verses" -ne "$expected_verses" ]; then
  echo "[corpus] expected $expected_verses verses from bible-kjv, got $verses" >&2
  exit 1
fi
mv "$tmp" "$out"
trap - EXIT
echo "[corpus] wrote $out ($verses verses, $(wc -c <"$out") bytes)"
