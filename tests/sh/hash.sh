#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The hash plugin against coreutils: every type's lines byte for byte as
# md5sum, sha1sum, sha256sum, sha512sum and b2sum print them (odd names
# included), hash.check as sha256sum -c, standard input as "-". See
# tests/support/clienv.sh for how it runs.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/support/clienv.sh"

# Files of mixed sizes: empty, small, across the read size (256 KiB), 1 MiB.
mkdir "$work/t"
: > "$work/t/empty"
printf 'abc\n' > "$work/t/small"
head -c 262143 /dev/urandom > "$work/t/below"
head -c 262144 /dev/urandom > "$work/t/exact"
head -c 262145 /dev/urandom > "$work/t/above"
head -c 1048576 /dev/urandom > "$work/t/mib"
printf x > "$work/t/lead"
mv "$work/t/lead" "$work/t/ lead"
if [ "$windows" != 1 ]; then    # names Windows cannot hold
    printf y > "$work/t/back\\slash"
    printf z > "$work/t/$(printf 'new\nline')"
    printf w > "$work/t/$(printf 'car\rriage')"
fi

for algo in md5 sha1 sha256 sha512 b2; do
    (cd "$work/t" && find . -type f -print0 | sort -z | xargs -0 "${algo}sum") > "$work/want.$algo"
    (cd "$work/t" && find . -type f -print0 | sort -z \
        | ${PP_WRAP:-} "$ppbin" run -k -q -0 --type "hash.$algo" -f -) > "$work/got.$algo" 2> "$work/err"
    if cmp -s "$work/got.$algo" "$work/want.$algo"; then
        ok "hash.$algo = ${algo}sum, odd names included"
    else
        bad "hash.$algo differs from ${algo}sum: $(diff "$work/got.$algo" "$work/want.$algo" | head -n 6) $(cat "$work/err")"
    fi
done

# --- standard input
check "hash.sha256 - reads standard input" "$(printf abc | pp run -q hash.sha256 -)" \
    "$(printf abc | sha256sum -)"

# --- hash.check: sha256sum -c's lines, OK and FAILED, exit 1 on a mismatch
(cd "$work/t" && sha256sum small below mib) > "$work/sums"
(cd "$work/t" && b2sum --tag small) >> "$work/sums"
(cd "$work/t" && sha512sum above) >> "$work/sums"
(cd "$work/t" && b2sum exact) >> "$work/sums"    # 128 digits that are not SHA-512
(cd "$work/t" && pp run -k -q --type hash.check -f "$work/sums") > "$work/check" 2> "$work/err"
check "hash.check of good sums exits 0" "$?" 0
check "hash.check says OK for each" "$(cat "$work/check" | tr '\n' '|')" \
    "small: OK|below: OK|mib: OK|small: OK|above: OK|exact: OK|"
printf 'changed' >> "$work/t/below"
(cd "$work/t" && pp run -k -q --type hash.check -f "$work/sums") > "$work/check" 2> "$work/err"
check "a mismatch exits 1" "$?" 1
(cd "$work/t" && sha256sum -c "$work/sums" 2>/dev/null | head -n 3) > "$work/want"
check "FAILED as sha256sum -c prints it" "$(head -n 3 "$work/check")" "$(cat "$work/want")"
contains "$work/err" "computed checksum did NOT match" "the mismatch is reported"
echo "0123  x" | pp run --type hash.check -f - > /dev/null 2> "$work/err"
check "a line that is no checksum exits 2" "$?" 2

summary
