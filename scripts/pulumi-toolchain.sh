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
# Optional local sources for those pieces (the proxy is then not asked for them; nothing changes without these):
#   NT_PULUMI_SOURCE=<git clone of github.com/pulumi/pulumi, bare or not>: the three language hosts are built from it
#     at the CLI's commit (checked: the clone must have it): `git archive` of their directories into the cache, then
#     a copy of the CLI's wrapper module with a replace directive per host to its directory (so pkg/v3 and sdk/v3 stay
#     at the CLI's version, checked with go list -m), the CLI's flags; installed into the toolchain's bin.
#   NT_COMMAND_SOURCE=<git clone of github.com/pulumi/pulumi-command>: pulumi-resource-command is built from its
#     provider/ module at the release commit (checked), with the version ldflag, and installed into the toolchain's
#     PULUMI_HOME plugin cache as when the proxy serves it.
#   Each piece built so is recorded in the stamp as "built from <path> at <commit>". A later run without the variables
#   reuses what is installed and reports each piece by the binary actually there (a "built from" line whose binary is
#   gone is replaced by "not installed", a "not built" line is dropped once its piece is installed); it rebuilds nothing.
# Usage: sh scripts/pulumi-toolchain.sh          prints the toolchain directory as its last line
#        sh scripts/pulumi-toolchain.sh --env    prints `export PATH=... PULUMI_HOME=...` lines instead
#        sh scripts/pulumi-toolchain.sh --check  prints the directory when it is built (with the pieces NT_*_SOURCE ask
#                                                for), else exits 1 (builds nothing)
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

# The pieces a source can provide: NAME FILE PATTERN (PATTERN: how the stamp's "not built" line names its module).
pieces() {
  for l in nodejs python go; do printf 'pulumi-language-%s %s pulumi-language-%s/v3@\n' "$l" "$bin/pulumi-language-$l" "$l"; done
  printf 'pulumi-resource-command %s pulumi-command/provider@\n' "$dir/src/pulumi-resource-command"
}
# The stamp as it stands for the binaries actually there: a "not built" line is dropped once its piece is installed
# (built from a source later), a "built from" line becomes "not installed" when its binary is gone.
report() {
  text=$(cat "$stamp")
  gone=""
  while read -r name file pat; do
    if [ -x "$file" ]; then
      text=$(printf '%s\n' "$text" | grep -v "^not built: .*$pat" || true)
    elif printf '%s\n' "$text" | grep -q "^$name: built from"; then
      text=$(printf '%s\n' "$text" | grep -v "^$name: built from" || true)
      gone="$gone
not installed: $name (the stamp says it was built from a source, but $file is gone: run again with NT_PULUMI_SOURCE or NT_COMMAND_SOURCE)"
    fi
  done <<PIECES
$(pieces)
PIECES
  printf '%s%s\n' "$text" "$gone" | sed '/^$/d'
}
# True when every piece that NT_PULUMI_SOURCE / NT_COMMAND_SOURCE ask for is installed.
sources_done() {
  if [ -n "${NT_PULUMI_SOURCE:-}" ]; then
    for l in nodejs python go; do [ -x "$bin/pulumi-language-$l" ] || return 1; done
  fi
  if [ -n "${NT_COMMAND_SOURCE:-}" ]; then [ -x "$dir/src/pulumi-resource-command" ] || return 1; fi
  return 0
}

finish() {
  [ "$mode" = check ] || report | sed 's/^/pulumi-toolchain: /' >&2
  if [ "$mode" = env ]; then
    # shellcheck disable=SC2016 # $PATH is for the shell that evaluates these lines
    printf 'export PATH=%s:"$PATH"\nexport PULUMI_HOME=%s\n' "$bin" "$dir/home"
  else
    printf '%s\n' "$dir"
  fi
  exit 0
}
[ -f "$stamp" ] && sources_done && finish
[ "$mode" = check ] && exit 1

mkdir -p "$bin" "$dir/home" "$dir/src"
exec 9>"$dir/.lock" # one build at a time per cache (CI and a test's setup may both ask)
flock 9
[ -f "$stamp" ] && sources_done && finish

start=$(date +%s)
export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local
# Module sums are checked against the checksum database through the proxy (the default GOSUMDB): nothing disabled.
tags=osusergo,grpcnotrace
sdkflag="-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$PULUMI_VERSION"
missing=""
built=""
fromsrc="" # the stamp's lines of the pieces built from NT_PULUMI_SOURCE / NT_COMMAND_SOURCE
w="$dir/src/pulumi"
cmdmod=github.com/pulumi/pulumi-command/provider

# source_commit VAR CLONE SHORT: prints the full commit SHORT of the git clone CLONE, or says what is wrong (exit 1).
source_commit() {
  [ -d "$2" ] || { say "$1=$2: no such directory"; return 1; }
  git -C "$2" rev-parse --git-dir >/dev/null 2>&1 || { say "$1=$2: not a git clone"; return 1; }
  git -C "$2" rev-parse --verify --quiet "$3^{commit}" ||
    { say "$1=$2: the clone does not have commit $3, the source of this toolchain's version: fetch it (git -C $2 fetch origin) or name another clone"; return 1; }
}
# hosts_from_source: the three language hosts from NT_PULUMI_SOURCE at the CLI's commit, in a copy of the CLI's
# wrapper module ($w) with a replace directive per host to its directory (`git archive` of the clone, in the cache).
hosts_from_source() {
  src=$(cd "$NT_PULUMI_SOURCE" 2>/dev/null && pwd) || die "NT_PULUMI_SOURCE=$NT_PULUMI_SOURCE: no such directory"
  commit=$(source_commit NT_PULUMI_SOURCE "$src" "${PULUMI_PSEUDO##*-}") || exit 1
  tree="$dir/src/pulumi-source-$commit"
  hw="$dir/src/hosts-from-source"
  set -- nodejs:sdk/nodejs/cmd/pulumi-language-nodejs python:sdk/python/cmd/pulumi-language-python go:sdk/go/pulumi-language-go
  if [ ! -f "$tree/.complete" ]; then
    rm -rf "$tree" && mkdir -p "$tree"
    for h in "$@"; do
      # git archive also reports unreadable LFS-like test data ("invalid object") and exits non-zero: go.mod is checked
      git -C "$src" archive "$commit" "${h#*:}" 2>"$tree/archive.log" | tar -x -C "$tree" 2>>"$tree/archive.log" || true
      { [ -f "$tree/${h#*:}/go.mod" ] && [ -f "$tree/${h#*:}/main.go" ]; } ||
        { cat "$tree/archive.log" >&2; die "NT_PULUMI_SOURCE=$src: git archive of ${h#*:} at $commit gave no go.mod/main.go (see above)"; }
    done
    : >"$tree/.complete"
  fi
  rm -rf "$hw"
  { mkdir -p "$hw" && cp "$w/go.mod" "$w/go.sum" "$hw/"; } || die "copying the wrapper module $w failed"
  for h in "$@"; do
    mod=github.com/pulumi/pulumi/${h#*:}/v3
    (cd "$hw" && go mod edit -replace "$mod=$tree/${h#*:}" -require "$mod@$PULUMI_PSEUDO") || die "go mod edit in $hw failed"
  done
  for m in github.com/pulumi/pulumi/pkg/v3 github.com/pulumi/pulumi/sdk/v3; do
    got=$(cd "$hw" && go list -m -f '{{.Version}}' "$m") || die "go list -m $m in $hw failed (see above)"
    [ "$got" = "v$PULUMI_VERSION" ] || die "with the hosts of $src, $m resolved to $got, not v$PULUMI_VERSION"
  done
  cliw=$w
  w=$hw
  proxybuilt=$built # build() notes into $built, the proxy's line of the stamp: these go into $fromsrc instead
  for h in "$@"; do
    lang=${h%%:*}
    [ -x "$bin/pulumi-language-$lang" ] && continue
    t1=$(date +%s)
    build "pulumi-language-$lang" "github.com/pulumi/pulumi/${h#*:}/v3" "$sdkflag"
    fromsrc="$fromsrc
pulumi-language-$lang: built from $src at $commit in $(( $(date +%s) - t1 )) s (the CLI's wrapper module: pkg/v3 and sdk/v3 v$PULUMI_VERSION)"
  done
  w=$cliw
  built=$proxybuilt
}
# command_from_source: pulumi-resource-command from NT_COMMAND_SOURCE's provider/ module at the release commit.
command_from_source() {
  src=$(cd "$NT_COMMAND_SOURCE" 2>/dev/null && pwd) || die "NT_COMMAND_SOURCE=$NT_COMMAND_SOURCE: no such directory"
  commit=$(source_commit NT_COMMAND_SOURCE "$src" "${COMMAND_PSEUDO##*-}") || exit 1
  tree="$dir/src/pulumi-command-source-$commit"
  if [ ! -f "$tree/.complete" ]; then
    rm -rf "$tree" && mkdir -p "$tree"
    git -C "$src" archive "$commit" provider | tar -x -C "$tree" || die "NT_COMMAND_SOURCE=$src: git archive $commit provider failed"
    [ -f "$tree/provider/go.mod" ] || die "NT_COMMAND_SOURCE=$src: $commit has no provider/go.mod (not a clone of pulumi/pulumi-command?)"
    : >"$tree/.complete"
  fi
  say "building pulumi-resource-command v$COMMAND_VERSION from $src at $commit"
  t1=$(date +%s)
  (cd "$tree/provider" && go build -trimpath -ldflags "-s -w -X $cmdmod/pkg/version.Version=v$COMMAND_VERSION" \
    -o "$dir/src/pulumi-resource-command.tmp" ./cmd/pulumi-resource-command) ||
    die "building pulumi-resource-command from $src at $commit failed (see above)"
  mv "$dir/src/pulumi-resource-command.tmp" "$dir/src/pulumi-resource-command"
  fromsrc="$fromsrc
pulumi-resource-command: built from $src at $commit in $(( $(date +%s) - t1 )) s"
}
# install_command: the command provider into this toolchain's plugin cache.
install_command() {
  PULUMI_HOME="$dir/home" PULUMI_SKIP_UPDATE_CHECK=true \
    "$bin/pulumi" plugin install resource command "$COMMAND_VERSION" --file "$dir/src/pulumi-resource-command" >/dev/null ||
    die "pulumi plugin install resource command $COMMAND_VERSION failed"
}

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

# 0. A finished toolchain asked for pieces from a source: builds only those (the rest stays as built) and notes them.
if [ -f "$stamp" ]; then
  [ -z "${NT_PULUMI_SOURCE:-}" ] || hosts_from_source
  if [ -n "${NT_COMMAND_SOURCE:-}" ] && [ ! -x "$dir/src/pulumi-resource-command" ]; then command_from_source && install_command; fi
  if [ -n "$fromsrc" ]; then # each rebuilt piece's earlier "built from" line is replaced
    old=$(cat "$stamp")
    for name in $(printf '%s\n' "$fromsrc" | sed -n 's/^\([a-z-]*\): built from .*/\1/p'); do
      old=$(printf '%s\n' "$old" | grep -v "^$name: built from" || true)
    done
    printf '%s\n%s\n' "$old" "$fromsrc" | sed '/^$/d' >"$stamp.tmp" && mv "$stamp.tmp" "$stamp"
  fi
  finish
fi

# 1. The CLI, from a wrapper module that requires pkg/v3 (no .go files: no `go mod tidy`). Its go.mod carries the
#    replace directive of pkg/go.mod (atotto/clipboard), which a dependency's go.mod cannot pass on.
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

# 2. The language hosts: built into the same wrapper (so pkg/v3 and sdk/v3 stay at v$PULUMI_VERSION) when served,
#    or from NT_PULUMI_SOURCE (the proxy is then not asked for them).
[ -z "${NT_PULUMI_SOURCE:-}" ] || hosts_from_source
[ -n "${NT_PULUMI_SOURCE:-}" ] || for h in nodejs:sdk/nodejs/cmd/pulumi-language-nodejs/v3 python:sdk/python/cmd/pulumi-language-python/v3 go:sdk/go/pulumi-language-go/v3; do
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

# 5. pulumi-resource-command, when served (or from NT_COMMAND_SOURCE, and the proxy is not asked): its own module
#    graph, installed into this toolchain's plugin cache.
if [ ! -x "$dir/src/pulumi-resource-command" ] && [ -n "${NT_COMMAND_SOURCE:-}" ]; then
  command_from_source
elif [ ! -x "$dir/src/pulumi-resource-command" ] && served "$cmdmod" "$COMMAND_PSEUDO"; then
  t0=$(date +%s)
  GOBIN="$dir/src/gobin" go install -trimpath \
    -ldflags "-s -w -X $cmdmod/pkg/version.Version=v$COMMAND_VERSION" "$cmdmod/cmd/pulumi-resource-command@$COMMAND_PSEUDO" ||
    die "building $cmdmod/cmd/pulumi-resource-command@$COMMAND_PSEUDO failed (see above)"
  mv "$dir/src/gobin/pulumi-resource-command" "$dir/src/pulumi-resource-command"
  built="$built pulumi-resource-command ($(( $(date +%s) - t0 )) s)"
fi
if [ -x "$dir/src/pulumi-resource-command" ]; then install_command; fi

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
  [ -z "$fromsrc" ] || printf '%s\n' "$fromsrc" | sed '/^$/d'
} >"$stamp"
finish
