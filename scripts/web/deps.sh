#!/bin/sh
# Compiles the C libraries attnlab links (cJSON, md4c, PCRE2, utf8proc) to
# WebAssembly with emcc, from their Debian 12 source packages at the versions
# pinned below, into OUT/include and OUT/lib (static .a). Nothing is
# downloaded from outside Debian. Idempotent: a library already built is skipped.
# With --pthread, compiled for the page's threaded build (emcc -pthread: every
# object of a threaded wasm module must be) into OUT/pthread/include and
# OUT/pthread/lib, from the same unpacked sources (OUT/src).
#
#   scripts/web/deps.sh [OUT] [--pthread]     (default: build-web/deps)
set -eu

OUT=$(realpath -m "${1:-build-web/deps}")
SRC="$OUT/src"
CFLAGS_WASM="-O3 -msimd128"
if [ "${2:-}" = "--pthread" ]; then
  OUT="$OUT/pthread"
  CFLAGS_WASM="$CFLAGS_WASM -pthread"
fi
OBJ="$OUT/obj"
# the versions Debian 12 (bookworm) ships; another one is refused
PINS="cjson=1.7.15-1+deb12u4 md4c=0.4.8-1 pcre2=10.42-1+deb12u2 utf8proc=2.8.0-1"
# emcc's JS tools need Debian's acorn when node is not Debian's (WEB.md)
export NODE_PATH=/usr/share/nodejs

die() { echo "deps.sh: $*" >&2; exit 1; }
command -v emcc >/dev/null || die "emcc not found: apt-get install emscripten"
command -v emcmake >/dev/null || die "emcmake not found: apt-get install emscripten"

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

# apt-get source needs a deb-src copy of the Debian sources entry
ensure_deb_src() {
  if apt-cache showsrc cjson 2>/dev/null | grep -q '^Package:'; then return; fi
  list=/etc/apt/sources.list.d/attnlab-deb-src.sources
  [ -f /etc/apt/sources.list.d/debian.sources ] || die "no /etc/apt/sources.list.d/debian.sources to copy a deb-src entry from"
  sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources | $SUDO tee "$list" >/dev/null
  $SUDO apt-get update -qq
}

# fetch NAME VERSION: unpacks the source package into $SRC/NAME-VERSION (once)
fetch() {
  name=$1 ver=$2 dir="$SRC/$1-$2"
  [ -d "$dir" ] && return
  ensure_deb_src
  have=$(apt-cache showsrc "$name" | sed -n 's/^Version: //p' | tr '\n' ' ')
  case " $have " in *" $ver "*) ;; *) die "$name: Debian offers version(s) ${have:-none}, not the pinned $ver";; esac
  tmp="$SRC/tmp-$name"
  rm -rf "$tmp" && mkdir -p "$tmp"
  if (cd "$tmp" && apt-get source -qq --download-only "$name=$ver" >/dev/null 2>"$tmp.log"); then
    (cd "$tmp" && dpkg-source -q --no-check -x ./*.dsc unpacked >/dev/null) || die "$name: dpkg-source -x failed"
  else
    # apt checks each file against the signed Sources index as it arrives; a mirror
    # lacking the packaging tarball still gives the upstream one, built without Debian's patches
    orig=$(ls "$tmp"/*.orig.tar.* 2>/dev/null | head -1)
    [ -n "$orig" ] || { cat "$tmp.log" >&2; die "$name: apt-get source $name=$ver failed"; }
    echo "deps.sh: $name: the mirror lacks Debian's packaging for $ver; building its verified upstream tarball $(basename "$orig") without Debian's patches" >&2
    mkdir -p "$tmp/unpacked" && tar -xf "$orig" -C "$tmp/unpacked" --strip-components=1
  fi
  rm -f "$tmp.log"
  mv "$tmp/unpacked" "$dir"
  rm -rf "$SRC/tmp-$name"
}

mkdir -p "$OUT/include" "$OUT/lib" "$SRC" "$OBJ"

for pin in $PINS; do
  name=${pin%%=*} ver=${pin#*=} dir="$SRC/$name-$ver" obj="$OBJ/$name"
  case $name in
    cjson) lib=libcjson.a ;; md4c) lib=libmd4c.a ;; pcre2) lib=libpcre2-8.a ;; utf8proc) lib=libutf8proc.a ;;
  esac
  [ -f "$OUT/lib/$lib" ] && continue
  echo "deps.sh: building $name $ver with emcc $CFLAGS_WASM"
  fetch "$name" "$ver"
  mkdir -p "$obj"
  case $name in
    cjson)
      emcc $CFLAGS_WASM -c "$dir/cJSON.c" -o "$obj/cJSON.o"
      emar rcs "$OUT/lib/$lib" "$obj/cJSON.o"
      mkdir -p "$OUT/include/cjson" && cp "$dir/cJSON.h" "$OUT/include/cjson/" && cp "$dir/cJSON.h" "$OUT/include/" ;;
    md4c)
      emcc $CFLAGS_WASM -c "$dir/src/md4c.c" -o "$obj/md4c.o"
      emar rcs "$OUT/lib/$lib" "$obj/md4c.o"
      cp "$dir/src/md4c.h" "$OUT/include/" ;;
    utf8proc)
      emcc $CFLAGS_WASM -DUTF8PROC_STATIC -c "$dir/utf8proc.c" -o "$obj/utf8proc.o"
      emar rcs "$OUT/lib/$lib" "$obj/utf8proc.o"
      cp "$dir/utf8proc.h" "$OUT/include/" ;;
    pcre2)
      # PCRE2's own build without configure or CMake (its NON-AUTOTOOLS-BUILD):
      # config.h.generic with what its CMake build sets for us (8-bit code units,
      # Unicode, no JIT: pcre2_jit_compile.c then holds stubs; the default limits
      # and LF newlines), the distributed character tables, and the source list
      # that file gives. Its CMake configure alone took a minute under emcc.
      cp "$dir/src/pcre2.h.generic" "$obj/pcre2.h"
      { cat "$dir/src/config.h.generic"
        printf '#define %s 1\n' SUPPORT_PCRE2_8 SUPPORT_UNICODE HAVE_MEMMOVE HAVE_STRERROR HAVE_STDINT_H HAVE_INTTYPES_H
      } > "$obj/config.h"
      cp "$dir/src/pcre2_chartables.c.dist" "$obj/pcre2_chartables.c"
      srcs="auto_possess compile config context convert dfa_match error extuni find_bracket jit_compile maketables
            match match_data newline ord2utf pattern_info script_run serialize string_utils study substitute substring
            tables ucd valid_utf xclass"
      for f in $srcs; do echo "$dir/src/pcre2_$f.c"; done | { cat; echo "$obj/pcre2_chartables.c"; } |
        xargs -P 2 -I {} sh -c 'emcc $1 -DHAVE_CONFIG_H -DPCRE2_CODE_UNIT_WIDTH=8 -DPCRE2_STATIC -I"$2" -I"$3/src" \
          -c "$4" -o "$2/$(basename "$4" .c).o"' sh "$CFLAGS_WASM" "$obj" "$dir" {} || die "pcre2: emcc failed"
      emar rcs "$OUT/lib/$lib" "$obj"/pcre2_*.o
      cp "$obj/pcre2.h" "$OUT/include/" ;;
  esac
done
# pkg-config files, so that CMake's pkg_check_modules finds these (PKG_CONFIG_LIBDIR=OUT/lib/pkgconfig)
mkdir -p "$OUT/lib/pkgconfig"
for pc in "libcjson 1.7.15 cjson" "md4c 0.4.8 md4c" "libpcre2-8 10.42 pcre2-8" "libutf8proc 2.8.0 utf8proc"; do
  set -- $pc
  cat > "$OUT/lib/pkgconfig/$1.pc" <<PC
prefix=$OUT
Name: $1
Description: $1 compiled with emcc (scripts/web/deps.sh)
Version: $2
Cflags: -I\${prefix}/include
Libs: -L\${prefix}/lib -l$3
PC
done
echo "deps.sh: cJSON, md4c, PCRE2 and utf8proc for wasm in $OUT"
