# Sourced by step scripts (not a step: test-all.sh runs scripts/test.d/*.sh only).
# leaves_no_files DIR CMD...: runs CMD from the checkout; fails, listing them, when it left new
# files in DIR, ignored ones included (setuptools' in-tree build/lib shipped stale modules into
# later installs; bytecode caches count too: CMD runs with PYTHONDONTWRITEBYTECODE unset, as on
# a user's machine). Outside a git checkout CMD just runs.
leaves_no_files() {
  local dir=$1 before left
  shift
  files() { git status --porcelain --ignored --untracked-files=all -- "$dir" | sort; }
  if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    "$@"
    return
  fi
  before=$(files)
  (unset PYTHONDONTWRITEBYTECODE; "$@")
  left=$(comm -13 <(echo "$before") <(files))
  if [ -n "$left" ]; then
    echo "'$*' left files in $dir:" >&2
    echo "$left" >&2
    return 1
  fi
}
