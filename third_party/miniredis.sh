#!/usr/bin/env bash
# Builds third_party/miniredis: pristine upstream miniredis at the pinned
# version, from the Go module cache, plus miniredis.patch, as a package of this
# module under its own import path. A replace directive would reach only this
# module (Go ignores a dependency's replaces), so a team's module importing
# dispatchsim would build against upstream miniredis, which lacks the patch;
# under its own path the patched copy reaches every importer. miniredis.patch
# stays upstream-ready: it is against upstream's paths, and the path is
# rewritten here after it applies.
#
#   third_party/miniredis.sh [DEST]    default DEST: third_party/miniredis
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
module=github.com/alicebob/miniredis/v2
version=v2.40.0
fork=github.com/dispatchsim/dispatchsim/third_party/miniredis
dest=${1:-$here/miniredis}

src=$(cd "$here" && go mod download -json "$module@$version" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$src" ] || { echo "miniredis.sh: no module cache copy of $module@$version" >&2; exit 1; }

rm -rf "$dest"
cp -R "$src" "$dest"
chmod -R u+w "$dest"
patch -d "$dest" -p1 -s --no-backup-if-mismatch <"$here/miniredis.patch"
# A package of this module: no module file of its own, imports under the fork's
# path. integration/ is upstream's rig against a real redis-server (package main
# behind a build tag); it does not build as a package here, so it stays out.
rm -rf "$dest/go.mod" "$dest/go.sum" "$dest/integration"
grep -rlF --include='*.go' "\"$module" "$dest" | xargs sed -i "s|\"$module|\"$fork|g"
# The tree keeps every Go file gofmt-clean; upstream has one doc comment
# gofmt reindents (gopher-json/json.go). Whitespace only.
gofmt -w "$dest"
