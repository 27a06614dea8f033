# Sourced by the guest builds (scripts/bnxt-guest/build.sh, scripts/vfio-bnxt-guest/build.sh):
# copies a file of the extracted packages ($stage) into the guest's root ($root) with every shared
# library it needs (its ELF NEEDED entries, found in $libdirs, then theirs), each once. Needs
# $stage, $root, the array libdirs and a function die.
find_lib() {
  local d
  for d in "${libdirs[@]}"; do [ -e "$stage/$d/$1" ] && { echo "$d/$1"; return 0; }; done
  return 1
}
declare -A copied=()
copy_file() {
  local rel=$1 needed lib
  [ -n "${copied[$rel]:-}" ] && return 0
  copied[$rel]=1
  mkdir -p "$root/$(dirname "$rel")"
  cp -L "$stage/$rel" "$root/$rel"
  for needed in $(readelf -d "$stage/$rel" 2>/dev/null | sed -nE 's/.*\(NEEDED\).*\[(.*)\]/\1/p'); do
    lib=$(find_lib "$needed") || die "$rel needs $needed, which no guest package provides"
    copy_file "$lib"
  done
}
