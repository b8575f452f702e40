#!/usr/bin/env bash
# Build llama.cpp for the engine twin lab and serve-bench's tests, once, outside the clone:
#   - a llama-cpp-python wheel (PyPI has no Linux wheel: pip would build it on every install)
#     into $CACHE/wheels, which `.ci/run` installs;
#   - llama.cpp's own `llama-server` (from the same vendored source) into
#     $CACHE/llama-server-build/bin, which tests/engines/test_llama_server.py starts.
# CACHE is $KVSTUDIO_ENGINE_CACHE or ~/.cache/kvstudio. What is already there is kept, so a
# second run (or a second CI run on the same machine) builds nothing. About 15 CPU-minutes
# for the wheel and 8 for the server (measured: 7.7 CPU-minutes); needs cmake and a C++ compiler.
# Usage: bash scripts/build_engines.sh   (inside the venv that has pip)
set -euo pipefail
VERSION="0.3.36"  # llama-cpp-python; its sdist vendors the llama.cpp it binds
CACHE="${KVSTUDIO_ENGINE_CACHE:-$HOME/.cache/kvstudio}"
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
FLAGS="-DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF"
sdist="$CACHE/src/llama_cpp_python-$VERSION.tar.gz"

for tool in cmake c++; do
    command -v "$tool" >/dev/null || { echo "error: $tool is missing; install it first" >&2; exit 2; }
done
mkdir -p "$CACHE/wheels" "$CACHE/src"
if [ ! -f "$sdist" ]; then
    echo "downloading llama-cpp-python $VERSION's source"
    pip download -q --no-deps --no-binary :all: "llama-cpp-python==$VERSION" -d "$CACHE/src"
fi

if ls "$CACHE"/wheels/llama_cpp_python-"$VERSION"-*.whl >/dev/null 2>&1; then
    echo "wheel: cached in $CACHE/wheels"
else
    echo "wheel: building (about 15 CPU-minutes)"
    CMAKE_ARGS="$FLAGS -DLLAVA_BUILD=OFF" CMAKE_BUILD_PARALLEL_LEVEL="$JOBS" \
        pip wheel -q --no-deps -w "$CACHE/wheels" "$sdist"
fi

server="$CACHE/llama-server-build/bin/llama-server"
if [ -x "$server" ]; then
    echo "llama-server: cached at $server"
else
    echo "llama-server: building (about 8 CPU-minutes)"
    tar xzf "$sdist" -C "$CACHE/src"
    cmake -S "$CACHE/src/llama_cpp_python-$VERSION/vendor/llama.cpp" \
        -B "$CACHE/llama-server-build" -DCMAKE_BUILD_TYPE=Release $FLAGS \
        -DLLAMA_CURL=OFF -DLLAMA_BUILD_SERVER=ON >/dev/null
    cmake --build "$CACHE/llama-server-build" --target llama-server -j "$JOBS" >/dev/null
    echo "llama-server: built at $server"
fi
