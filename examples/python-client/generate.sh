#!/usr/bin/env bash
# Generates the Python protobuf and gRPC stubs of the contract with Debian's protoc and grpc_python_plugin
# (packages protobuf-compiler and protobuf-compiler-grpc). Usage: generate.sh [OUT_DIR] (default: ./out here);
# PROTOC names another protoc than the one on PATH.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$here/out}"

protoc="${PROTOC:-$(command -v protoc || true)}"
[ -n "$protoc" ] || { echo "protoc not found: install the Debian package protobuf-compiler" >&2; exit 2; }
plugin="$(command -v grpc_python_plugin || true)"
[ -n "$plugin" ] || { echo "grpc_python_plugin not found: install the Debian package protobuf-compiler-grpc" >&2; exit 2; }
google="$root/node_modules/google-proto-files"
[ -f "$google/google/api/annotations.proto" ] || { echo "$google/google/api/annotations.proto not found: run npm ci in $root" >&2; exit 2; }

mkdir -p "$out"
cd "$root/proto"
# google/api/{annotations,http}.proto are generated too: the contract imports them and Debian's python3-protobuf
# does not ship them (they belong to googleapis-common-protos).
"$protoc" -I . -I "$google" \
  --python_out="$out" \
  --grpc_out="$out" --plugin=protoc-gen-grpc="$plugin" \
  aiagent/v1/*.proto google/api/annotations.proto google/api/http.proto
echo "stubs written to $out" >&2
