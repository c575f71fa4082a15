#!/usr/bin/env bash
# Formats the Swift sources with the committed .swift-format (the toolchain's `swift format`);
# scripts/test.sh checks that nothing is left to change (`swift format lint --strict`).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
swift format format --in-place --recursive Sources Tests Package.swift
swift format lint --strict --recursive Sources Tests Package.swift
