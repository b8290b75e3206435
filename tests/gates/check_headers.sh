#!/usr/bin/env bash
# check_headers.sh - every public header compiles alone and every macro it defines expands.
#
# For each header given (include/gsched/*.h and the generated version.h), one translation unit
# includes only that header and then uses every GS* macro still defined after it (the list comes
# from the compiler, `-E -dM`, so #undef'd helpers are left out and new macros are picked up
# without editing this script):
#   - object-like macros with a non-empty expansion: `(void)(NAME);`
#   - function-like X-macro tables (`*_MAP(XX)`): expanded with a variadic sink macro, so every
#     row must have the shape the table promises;
#   - other function-like macros: called with 0 for each parameter;
#   - empty object-like macros (include guards, flags): only their definition is checked.
# Compiled as strict C11 (-std=c11 -pedantic, no feature-test macros) with warnings as errors.
# Before checking the real headers it checks itself: a header with a broken macro (the
# `@VAR @` of a clang-formatted CMake template) and one that is not self-contained must fail.
#
# usage: check_headers.sh CC INCLUDE_DIR... -- HEADER...   (headers as included: gsched/x.h)
set -euo pipefail
CC=$1
shift
INC=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    INC+=("-I$1")
    shift
done
[ "${1:-}" = "--" ] || { echo "usage: $0 CC INCLUDE_DIR... -- HEADER..." >&2; exit 2; }
shift
[ $# -gt 0 ] || { echo "check_headers: no headers given" >&2; exit 2; }

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
CFLAGS=(-std=c11 -pedantic -Wall -Wextra -Werror -Wstrict-prototypes -Wmissing-prototypes -c)

# check_one INCLUDE_ARGS... -- HEADER: 0 when HEADER passes
check_one() {
    local inc=()
    while [ "$1" != "--" ]; do
        inc+=("$1")
        shift
    done
    local h=$2 base
    base=$(echo "$h" | tr '/.' '__')
    local tu=$TMP/$base.c
    printf '#include "%s"\n' "$h" > "$TMP/$base.inc.c"
    # the GS* macros defined once the header is included (object-like and function-like)
    if ! "$CC" -std=c11 "${inc[@]}" -E -dM "$TMP/$base.inc.c" > "$TMP/$base.macros" 2> "$TMP/$base.err"; then
        cat "$TMP/$base.err" >&2
        return 1
    fi
    {
        printf '#include "%s"\n' "$h"
        printf '#define GS_HDRCHECK_SINK(...) +1\n'
        printf 'int gs_hdrcheck_use(void);\nint gs_hdrcheck_use(void)\n{\n'
        # "#define NAME body" or "#define NAME(a, b) body"
        sed -n 's/^#define \(GS[A-Za-z0-9_]*\)\(([^)]*)\)\{0,1\}\(.*\)$/\1|\2|\3/p' "$TMP/$base.macros" |
            while IFS='|' read -r name params body; do
                case $name in GS_HDRCHECK_*) continue ;; esac
                if [ -n "$params" ]; then
                    local p=${params#(}
                    p=${p%)}
                    local n
                    n=$(echo "$p" | awk -F, '{print NF}')
                    local args="" sep="" i
                    case $name in
                    *_MAP) for ((i = 0; i < n; i++)); do args+="${sep}GS_HDRCHECK_SINK"; sep=", "; done
                        printf '    (void)(0 %s(%s));\n' "$name" "$args" ;;
                    *) for ((i = 0; i < n; i++)); do args+="${sep}0"; sep=", "; done
                        printf '    (void)(%s(%s));\n' "$name" "$args" ;;
                    esac
                elif [ -n "${body// /}" ]; then
                    printf '    (void)(%s);\n' "$name"
                else
                    printf '#ifndef %s\n#error %s\n#endif\n' "$name" "$name"
                fi
            done
        printf '    return 0;\n}\n'
    } > "$tu"
    if ! "$CC" "${CFLAGS[@]}" "${inc[@]}" "$tu" -o "$TMP/$base.o" 2> "$TMP/$base.err"; then
        cat "$TMP/$base.err" >&2
        return 1
    fi
    return 0
}

# self-check: the checker must reject a broken macro and a header that is not self-contained
mkdir -p "$TMP/neg/gsched"
printf '#ifndef N1_H\n#define N1_H\n#define GS_NEG_MAJOR 0 @\n#endif\n' > "$TMP/neg/gsched/n1.h"
printf '#ifndef N2_H\n#define N2_H\nstatic inline int64_t gs_neg(void) { return 0; }\n#endif\n' \
    > "$TMP/neg/gsched/n2.h"
for h in gsched/n1.h gsched/n2.h; do
    if check_one "-I$TMP/neg" -- "$h" 2> /dev/null; then
        echo "check_headers: self-check failed: $h was accepted" >&2
        exit 1
    fi
done

fail=0
for h in "$@"; do
    if check_one "${INC[@]}" -- "$h"; then
        echo "ok   $h ($(grep -c '(void)\|#ifndef' "$TMP/$(echo "$h" | tr '/.' '__').c") macro uses)"
    else
        echo "FAIL $h" >&2
        fail=1
    fi
done
exit $fail
