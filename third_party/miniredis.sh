#!/usr/bin/env bash
# Builds third_party/miniredis: pristine upstream miniredis at the pinned
# version, from the Go module cache, plus miniredis.patch. go.mod replaces the
# module with that copy until upstream takes the change (see the README).
#
#   third_party/miniredis.sh [DEST]    default DEST: third_party/miniredis
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
module=github.com/alicebob/miniredis/v2
version=v2.40.0 # keep in step with the require in go.mod
dest=${1:-$here/miniredis}

src=$(cd "$here" && go mod download -json "$module@$version" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$src" ] || { echo "miniredis.sh: no module cache copy of $module@$version" >&2; exit 1; }

rm -rf "$dest"
cp -R "$src" "$dest"
chmod -R u+w "$dest"
patch -d "$dest" -p1 -s --no-backup-if-mismatch <"$here/miniredis.patch"
# The tree keeps every Go file gofmt-clean; upstream has one doc comment
# gofmt reindents (gopher-json/json.go). Whitespace only.
gofmt -w "$dest"
