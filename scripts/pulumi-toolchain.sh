#!/bin/sh
# Builds the real Pulumi toolchain from the Go module proxy into a cache outside the repository, for the real-CLI
# test suite (tests/cli) and `npm run demo`:
#   pulumi                 the CLI, github.com/pulumi/pulumi/pkg/v3 at the @pulumi/pulumi version of package-lock.json;
#   pulumi-language-yaml   github.com/pulumi/pulumi-yaml (see YAML_VERSION below for why not the release paired with the CLI);
#   the shims the CLI runs from sdk/v3 (pulumi-resource-pulumi-nodejs, ...), installed with mode 0755;
#   a Python venv with the pulumi SDK from PyPI at the same version (for Python programs through Automation API).
# It also asks the proxy for the pieces it does not serve today and names each one it could not get, every run:
#   pulumi-language-nodejs / -python / -go (modules with no tags of their own, required at the CLI's commit) and
#   pulumi-resource-command (module github.com/pulumi/pulumi-command/provider, no tags of its own). When one of them is
#   served, it is built and installed (the command provider into the toolchain's own PULUMI_HOME plugin cache).
# Usage: sh scripts/pulumi-toolchain.sh          prints the toolchain directory as its last line
#        sh scripts/pulumi-toolchain.sh --env    prints `export PATH=... PULUMI_HOME=...` lines instead
#        sh scripts/pulumi-toolchain.sh --check  prints the directory when it is built, else exits 1 (builds nothing)
# A finished build of the same versions is reused (a stamp file records it); a build that failed half-way is resumed
# (Go's module and build caches, GOMODCACHE and GOCACHE, are kept between runs). Nothing here downloads a binary.
# Environment: NT_TOOLCHAIN_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/net-tuning/pulumi-toolchain).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
mode=dir
[ "${1:-}" = "--env" ] && mode="env"
[ "${1:-}" = "--check" ] && mode="check"

say() { printf 'pulumi-toolchain: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }
command -v go >/dev/null 2>&1 || die "needs Go 1.24 or later on PATH (apt-get install golang-go, or go.dev/dl)"
command -v node >/dev/null 2>&1 || die "needs node to read package-lock.json"

lockver() {
  node -e 'const l=require(process.argv[1]);const p=l.packages["node_modules/"+process.argv[2]];if(!p)process.exit(1);console.log(p.version)' \
    "$here/package-lock.json" "$1"
}
PULUMI_VERSION=$(lockver @pulumi/pulumi) || die "package-lock.json has no @pulumi/pulumi"
COMMAND_VERSION=$(lockver @pulumi/command) || die "package-lock.json has no @pulumi/command"

# The sources this script knows. PULUMI_COMMIT: the commit of tag pkg/v$PULUMI_VERSION (the language hosts are
# required at it: pseudo-version v3.0.0-<commit time>-<commit>). YAML_VERSION: pulumi-yaml v1.37.0 is the release
# paired with 3.248 but requires pkg/v3 v3.247.0, which the proxy refuses (403), and does not compile against v3.248.0
# (pkghost.New and plugin.NewContext changed); v1.38.0 (pkg/v3 v3.254.0) is the first release that builds here.
case "$PULUMI_VERSION" in
  3.248.0) PULUMI_PSEUDO=v3.0.0-20260624180030-dc7edd58bc13; YAML_VERSION=1.38.0 ;;
  *) die "@pulumi/pulumi $PULUMI_VERSION: this script knows the sources of 3.248.0 only; add the commit of tag pkg/v$PULUMI_VERSION and a pulumi-yaml release that builds with it" ;;
esac
case "$COMMAND_VERSION" in
  1.2.1) COMMAND_PSEUDO=v0.0.0-20260303235922-7f3eb6f3b77c ;; # commit 7f3eb6f3b77c, tag v1.2.1
  *) die "@pulumi/command $COMMAND_VERSION: this script knows the source commit of 1.2.1 only" ;;
esac

cache=${NT_TOOLCHAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/net-tuning/pulumi-toolchain}
dir="$cache/pulumi-v$PULUMI_VERSION-command-v$COMMAND_VERSION"
bin="$dir/bin"
stamp="$dir/.complete"

finish() {
  [ "$mode" = check ] || sed 's/^/pulumi-toolchain: /' "$stamp" >&2
  if [ "$mode" = env ]; then
    # shellcheck disable=SC2016 # $PATH is for the shell that evaluates these lines
    printf 'export PATH=%s:"$PATH"\nexport PULUMI_HOME=%s\n' "$bin" "$dir/home"
  else
    printf '%s\n' "$dir"
  fi
  exit 0
}
[ -f "$stamp" ] && finish
[ "$mode" = check ] && exit 1

mkdir -p "$bin" "$dir/home" "$dir/src"
exec 9>"$dir/.lock" # one build at a time per cache (CI and a test's setup may both ask)
flock 9
[ -f "$stamp" ] && finish

start=$(date +%s)
export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local
# Module sums are checked against the checksum database through the proxy (the default GOSUMDB): nothing disabled.
tags=osusergo,grpcnotrace
sdkflag="-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$PULUMI_VERSION"
missing=""
built=""

# served MODULE VERSION: true when the proxy serves it; otherwise records why in $missing.
served() {
  if out=$(cd "$w" && go list -m -json "$1@$2" 2>&1 >/dev/null); then return 0; fi
  why=$(printf '%s\n' "$out" | grep -v '^go: downloading' | sed -n 's/.*: \([0-9][0-9][0-9] [A-Za-z ]*\)$/\1/p; s/^[[:space:]]*server response: //p' | tr '\n' ' ' | sed 's/ *$//')
  [ -n "$why" ] || why=$(printf '%s\n' "$out" | tail -n 1)
  say "not served: $1@$2: $why"
  missing="$missing
not built: $1@$2 (not served by the Go module proxy: $why)"
  return 1
}
# build NAME PACKAGE LDFLAGS: go build in the wrapper module into $bin, once.
build() {
  [ -x "$bin/$1" ] && return 0
  say "building $1 ($2)"
  t0=$(date +%s)
  (cd "$w" && go build -trimpath -tags "$tags" -ldflags "-s -w $3" -o "$bin/$1.tmp" "$2") || die "building $2 failed (see above)"
  mv "$bin/$1.tmp" "$bin/$1"
  built="$built $1 ($(( $(date +%s) - t0 )) s)"
}

# 1. The CLI, from a wrapper module that requires pkg/v3 (no .go files: no `go mod tidy`). Its go.mod carries the
#    replace directive of pkg/go.mod (atotto/clipboard), which a dependency's go.mod cannot pass on.
w="$dir/src/pulumi"
mkdir -p "$w"
if ! grep -qs "github.com/pulumi/pulumi/pkg/v3 v$PULUMI_VERSION" "$w/go.mod"; then
  rm -f "$w/go.mod" "$w/go.sum"
  (cd "$w" && go mod init net-tuning.local/pulumi-toolchain >/dev/null 2>&1 &&
    go mod edit -replace github.com/atotto/clipboard=github.com/tgummerer/clipboard@v0.0.0-20241001131231-d02d263e614e &&
    go get "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi@v$PULUMI_VERSION" >"$dir/src/go-get.log" 2>&1) ||
    { cat "$dir/src/go-get.log" >&2; die "resolving github.com/pulumi/pulumi/pkg/v3@v$PULUMI_VERSION failed (see above)"; }
fi
for m in github.com/pulumi/pulumi/pkg/v3 github.com/pulumi/pulumi/sdk/v3; do
  got=$(cd "$w" && go list -m -f '{{.Version}}' "$m")
  [ "$got" = "v$PULUMI_VERSION" ] || die "$m resolved to $got, not v$PULUMI_VERSION: the build would not match @pulumi/pulumi"
done
build pulumi github.com/pulumi/pulumi/pkg/v3/cmd/pulumi "$sdkflag"

# 2. The language hosts: built into the same wrapper (so pkg/v3 and sdk/v3 stay at v$PULUMI_VERSION) when served.
for h in nodejs:sdk/nodejs/cmd/pulumi-language-nodejs/v3 python:sdk/python/cmd/pulumi-language-python/v3 go:sdk/go/pulumi-language-go/v3; do
  lang=${h%%:*}
  mod=github.com/pulumi/pulumi/${h#*:}
  [ -x "$bin/pulumi-language-$lang" ] && continue
  served "$mod" "$PULUMI_PSEUDO" || continue
  (cd "$w" && go get "$mod@$PULUMI_PSEUDO") || die "adding $mod@$PULUMI_PSEUDO to the wrapper failed (see above)"
  build "pulumi-language-$lang" "$mod" "$sdkflag"
done

# 3. The shims the CLI runs for component plugins, policy packs and python, shipped in sdk/v3 without +x.
sdk=$(cd "$w" && go list -m -f '{{.Dir}}' github.com/pulumi/pulumi/sdk/v3)
for f in nodejs/dist/pulumi-resource-pulumi-nodejs python/dist/pulumi-resource-pulumi-python \
         python/cmd/pulumi-language-python-exec nodejs/dist/pulumi-analyzer-policy python/dist/pulumi-analyzer-policy-python; do
  [ -f "$sdk/$f" ] && install -m 0755 "$sdk/$f" "$bin/$(basename "$f")"
done

# 4. pulumi-language-yaml, a bundled plugin the CLI never downloads: its own module graph (go install).
if [ ! -x "$bin/pulumi-language-yaml" ]; then
  say "building pulumi-language-yaml v$YAML_VERSION"
  t0=$(date +%s)
  GOBIN="$dir/src/gobin" go install -trimpath -tags "$tags" \
    -ldflags "-s -w -X github.com/pulumi/pulumi-yaml/pkg/version.Version=v$YAML_VERSION" \
    "github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml@v$YAML_VERSION" ||
    die "building github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml@v$YAML_VERSION failed (see above)"
  mv "$dir/src/gobin/pulumi-language-yaml" "$bin/pulumi-language-yaml"
  built="$built pulumi-language-yaml ($(( $(date +%s) - t0 )) s)"
fi

# 5. pulumi-resource-command, when served: its own module graph, installed into this toolchain's plugin cache.
cmdmod=github.com/pulumi/pulumi-command/provider
if [ ! -x "$dir/src/pulumi-resource-command" ] && served "$cmdmod" "$COMMAND_PSEUDO"; then
  t0=$(date +%s)
  GOBIN="$dir/src/gobin" go install -trimpath \
    -ldflags "-s -w -X $cmdmod/pkg/version.Version=v$COMMAND_VERSION" "$cmdmod/cmd/pulumi-resource-command@$COMMAND_PSEUDO" ||
    die "building $cmdmod/cmd/pulumi-resource-command@$COMMAND_PSEUDO failed (see above)"
  mv "$dir/src/gobin/pulumi-resource-command" "$dir/src/pulumi-resource-command"
  built="$built pulumi-resource-command ($(( $(date +%s) - t0 )) s)"
fi
if [ -x "$dir/src/pulumi-resource-command" ]; then
  PULUMI_HOME="$dir/home" PULUMI_SKIP_UPDATE_CHECK=true \
    "$bin/pulumi" plugin install resource command "$COMMAND_VERSION" --file "$dir/src/pulumi-resource-command" >/dev/null ||
    die "pulumi plugin install resource command $COMMAND_VERSION failed"
fi

# 6. The Python SDK from PyPI at the CLI's version, in a venv of the toolchain (Python programs under the real CLI run
#    through Automation API's inline-program server: pulumi-language-python is not served by the Go module proxy).
if [ ! -x "$dir/python/bin/python" ] || ! "$dir/python/bin/python" -c "import pulumi" 2>/dev/null; then
  if command -v python3 >/dev/null 2>&1; then
    t0=$(date +%s)
    if ! { python3 -m venv "$dir/python" && "$dir/python/bin/pip" install -q --disable-pip-version-check "pulumi==$PULUMI_VERSION"; }; then
      die "installing the pulumi Python SDK $PULUMI_VERSION from PyPI into $dir/python failed (see above)"
    fi
    built="$built pulumi Python SDK $PULUMI_VERSION ($(( $(date +%s) - t0 )) s)"
  else
    missing="$missing
not installed: the pulumi Python SDK (no python3 on PATH)"
  fi
fi

got=$("$bin/pulumi" version)
[ "$got" = "v$PULUMI_VERSION" ] || die "the built CLI says $got, not v$PULUMI_VERSION"
{
  printf 'pulumi %s and pulumi-language-yaml v%s, built from the Go module proxy in %s s:%s\n' \
    "$got" "$YAML_VERSION" "$(( $(date +%s) - start ))" "$built"
  [ -z "$missing" ] || printf '%s\n' "$missing" | sed '/^$/d'
} >"$stamp"
finish
