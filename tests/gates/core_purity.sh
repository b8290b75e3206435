#!/usr/bin/env bash
# core_purity.sh - the purity gate of libgsched (src/core): no I/O, no clock, no rand(), no
# environment, no exit paths.  Lists the symbols libgsched_core's objects need from outside the
# library (nm -u, minus what the archive defines itself) and fails on any symbol that is not in
# the allow-list below: libc/libm memory, string, conversion, sorting, formatting-to-buffer and
# math calls, which keep the core deterministic and free of side effects.  Sanitizer builds add
# __asan_* / __ubsan_* / __sanitizer_* hooks, allowed by prefix.
#
# A new libc call in the core fails this test: add it here only if it is pure (no I/O, no
# global state, no clock, no randomness, never terminates the process).
#
# usage: core_purity.sh NM AR CC LIBGSCHED_CORE.a
# (AR and CC build a small archive calling printf and time, which the gate must reject first)
set -euo pipefail
NM=$1
AR=$2
CC=$3
LIB=$4
[ -f "$LIB" ] || { echo "core_purity: no such library: $LIB" >&2; exit 2; }

ALLOW=(
    # memory
    malloc calloc realloc free
    memcpy memmove memset memcmp memchr
    # strings and conversions (strtok is not here: hidden static state)
    strlen strnlen strcmp strncmp strcasecmp strncasecmp strchr strrchr strstr strspn strcspn
    strpbrk strdup strndup strtod strtof strtol strtoll strtoul strtoull
    tolower toupper __ctype_b_loc __ctype_tolower_loc __ctype_toupper_loc
    # strto* report overflow through errno
    __errno_location
    # sorting and searching
    qsort bsearch
    # formatting into caller-provided buffers
    snprintf vsnprintf
    # libm
    ceil floor round lround llround trunc rint lrint llrint nearbyint fabs fmod fmin fmax
    sqrt cbrt exp exp2 expm1 log log2 log10 log1p pow hypot erf erfc lgamma tgamma
    sin cos tan asin acos atan atan2 sinh cosh tanh ldexp frexp modf copysign nextafter
    ceilf floorf sqrtf expf logf powf fabsf
    # compiler support
    __stack_chk_fail
)

is_allowed() {
    case $1 in __asan_* | __ubsan_* | __sanitizer_*) return 0 ;; esac
    local a
    for a in "${ALLOW[@]}"; do [ "$a" = "$1" ] && return 0; done
    return 1
}

# check LIB: lists every disallowed symbol and the objects using it; 0 when all are allowed
check() {
    local lib=$1 defined needed external s o bad=0 n=0
    defined=$("$NM" -g --defined-only "$lib" | awk 'NF >= 3 {print $3}' | sort -u)
    needed=$("$NM" -u "$lib" | awk 'NF >= 1 && $NF !~ /:$/ {print $NF}' | sort -u)
    [ -n "$needed" ] || { echo "core_purity: nm -u listed nothing for $lib" >&2; return 2; }
    external=$(comm -23 <(echo "$needed") <(echo "$defined"))
    for s in $external; do
        n=$((n + 1))
        if ! is_allowed "$s"; then
            echo "core_purity: $(basename "$lib") uses '$s', which is not allowed in the core:" >&2
            for o in $("$NM" -A -u "$lib" | awk -v s="$s" '$NF == s {print $1}' | sort -u); do
                echo "    in ${o%:}" >&2
            done
            bad=1
        fi
    done
    [ $bad -eq 0 ] && echo "core_purity: $(basename "$lib"): $n external symbols, all allowed"
    return $bad
}

# self-check: an archive calling printf() and time() must be rejected
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
printf '#include <stdio.h>\n#include <time.h>\nint gs_impure(void);\n'\
'int gs_impure(void) { return printf("%%ld", (long)time(NULL)); }\n' > "$TMP/impure.c"
"$CC" -c "$TMP/impure.c" -o "$TMP/impure.o"
"$AR" rc "$TMP/libimpure.a" "$TMP/impure.o"
if check "$TMP/libimpure.a" 2> "$TMP/err"; then
    echo "core_purity: self-check failed: printf/time were accepted" >&2
    exit 1
fi
grep -q "'printf'" "$TMP/err" && grep -q "'time'" "$TMP/err" ||
    { echo "core_purity: self-check failed:" >&2; cat "$TMP/err" >&2; exit 1; }

check "$LIB"
